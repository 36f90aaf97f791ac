"""The customer's own tools (user tools): what they see and do on their phone and their router.

Only the simulated customer calls these; the agent never sees them. A call fails the way the device would:
a setting of a phone that is not theirs is not there to change.
"""

from __future__ import annotations

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.telecom.models import CURRENT_FIRMWARE, Device, Line, Router
from env_server.domains.telecom.tools._views import PhoneView, RouterView


def _phone(ctx: ToolContext, device_id: str) -> Device:
    return ctx.get_or_refuse(Device, device_id, f"No phone {device_id}")


def _router(ctx: ToolContext, router_id: str) -> Router:
    return ctx.get_or_refuse(Router, router_id, f"No router {router_id}")


@tool(kind="read")
def check_phone(ctx: ToolContext, device_id: str) -> PhoneView:
    """Look at your phone's settings screen.

    Args:
        device_id: your phone, e.g. "DV-0042".
    """
    return PhoneView.of(_phone(ctx, device_id))


def _set(ctx: ToolContext, device_id: str, setting: str, value: bool | str) -> PhoneView:
    """Change one setting of the customer's phone, as its settings screen would."""
    phone = _phone(ctx, device_id)
    setattr(phone, setting, value)
    return PhoneView.of(phone)


@tool(kind="write")
def set_airplane_mode(ctx: ToolContext, device_id: str, on: bool) -> PhoneView:
    """Switch your phone's airplane mode on or off.

    Args:
        device_id: your phone, e.g. "DV-0042".
        on: true to switch airplane mode on, false to switch it off.
    """
    return _set(ctx, device_id, "airplane_mode", on)


@tool(kind="write")
def set_mobile_data(ctx: ToolContext, device_id: str, on: bool) -> PhoneView:
    """Switch your phone's mobile data on or off.

    Args:
        device_id: your phone, e.g. "DV-0042".
        on: true to switch mobile data on.
    """
    return _set(ctx, device_id, "mobile_data", on)


@tool(kind="write")
def set_data_roaming(ctx: ToolContext, device_id: str, on: bool) -> PhoneView:
    """Switch your phone's data roaming setting on or off.

    Args:
        device_id: your phone, e.g. "DV-0042".
        on: true to allow data abroad.
    """
    return _set(ctx, device_id, "data_roaming", on)


@tool(kind="write")
def set_apn(ctx: ToolContext, device_id: str, apn: str) -> PhoneView:
    """Type a new access point name (APN) into your phone's mobile network settings.

    Args:
        device_id: your phone, e.g. "DV-0042".
        apn: the APN exactly as the agent spelled it.
    """
    if not apn.strip():
        raise ToolError("The APN field cannot be empty")
    return _set(ctx, device_id, "apn", apn.strip())


@tool(kind="write")
def enter_puk(ctx: ToolContext, device_id: str, puk: str) -> PhoneView:
    """Type the PUK the agent gave you into your phone's "SIM blocked" screen.

    Args:
        device_id: your phone, e.g. "DV-0042".
        puk: the eight-digit PUK exactly as the agent gave it.
    """
    phone = _phone(ctx, device_id)
    if phone.sim_state != "pin_locked":
        raise ToolError("The phone does not ask for a PUK: its SIM is not blocked")
    line = ctx.session.get(Line, phone.line_id)
    if line is None or line.puk != "".join(puk.split()):
        raise ToolError("Wrong PUK: the SIM stays blocked")
    return _set(ctx, device_id, "sim_state", "ready")


@tool(kind="read")
def check_router(ctx: ToolContext, router_id: str) -> RouterView:
    """Look at your router's lights and status page.

    Args:
        router_id: your router, e.g. "RT-0042".
    """
    return RouterView.of(_router(ctx, router_id))


@tool(kind="write")
def restart_router(ctx: ToolContext, router_id: str) -> RouterView:
    """Unplug your router, wait ten seconds and plug it back in (it is on afterwards).

    Args:
        router_id: your router, e.g. "RT-0042".
    """
    router = _router(ctx, router_id)
    router.power = "on"
    router.restarts += 1
    return RouterView.of(router)


@tool(kind="write")
def update_router_firmware(ctx: ToolContext, router_id: str) -> RouterView:
    """Press "Update firmware" on your router's status page; it installs the carrier's current firmware.

    Args:
        router_id: your router, e.g. "RT-0042".
    """
    router = _router(ctx, router_id)
    if router.power != "on":
        raise ToolError("The router is off: its status page does not load")
    router.firmware = CURRENT_FIRMWARE
    return RouterView.of(router)
