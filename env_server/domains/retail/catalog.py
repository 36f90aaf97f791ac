"""The fixed reference data of the retail domain: the clock, policy constants, tiers, products, promotions.

These rows do not depend on the RNG, so tasks can name products and codes and rely on their prices and
warranty terms; the random part of the seed (customers and their order history) lives in `seed.py`.
"""

from __future__ import annotations

from datetime import date, datetime

from env_server.domains.retail.factories import ProductSpec, PromotionSpec, TierSpec

#: The domain's frozen clock: Thursday 1 October 2026, 09:00.
NOW = datetime(2026, 10, 1, 9, 0)
#: The return fee deducted from a changed-mind return's refund unless the tier waives it (policy rule 6).
RETURN_FEE_CENTS = 799

TIERS: tuple[TierSpec, ...] = (
    TierSpec("basic", "Basic", 1, 30, False, 0, False),
    TierSpec("silver", "Silver", 2, 30, False, 0, False),
    TierSpec("gold", "Gold", 3, 45, True, 0, True),
    TierSpec("platinum", "Platinum", 4, 60, True, 12, True),
)

PRODUCTS: tuple[ProductSpec, ...] = (
    ProductSpec("PR-10001", "Aero 14 Laptop (16 GB, 512 GB)", "Lumen", "laptop", 109900, 12),
    ProductSpec("PR-10002", "Aero 16 Pro Laptop (32 GB, 1 TB)", "Lumen", "laptop", 189900, 24),
    ProductSpec("PR-10003", "Vantage 13 Ultrabook", "Corvid", "laptop", 84900, 12),
    ProductSpec("PR-10004", "Vantage 15 Creator Laptop", "Corvid", "laptop", 149900, 12),
    ProductSpec("PR-10005", "Chromebook Go 11", "Pebble", "laptop", 27900, 12, True),
    ProductSpec("PR-10006", "Pixelate 8 Smartphone (128 GB)", "Orbit", "phone", 69900, 12),
    ProductSpec("PR-10007", "Pixelate 8 Pro Smartphone (256 GB)", "Orbit", "phone", 99900, 12),
    ProductSpec("PR-10008", "Nova S Smartphone", "Helio", "phone", 44900, 24),
    ProductSpec("PR-10009", "Nova Fold Smartphone", "Helio", "phone", 159900, 24),
    ProductSpec("PR-10010", "Slate 11 Tablet (Wi-Fi)", "Orbit", "tablet", 49900, 12),
    ProductSpec("PR-10011", "Slate 13 Pro Tablet", "Orbit", "tablet", 89900, 12),
    ProductSpec("PR-10012", "Kindred E-Reader", "Pebble", "tablet", 12900, 12),
    ProductSpec("PR-10013", "QuietWave ANC Headphones", "Sonique", "headphones", 29900, 24),
    ProductSpec("PR-10014", "QuietWave Buds", "Sonique", "headphones", 17900, 12),
    ProductSpec("PR-10015", "StudioMonitor Wired Headphones", "Arden", "headphones", 14900, 24),
    ProductSpec("PR-10016", "SportFit Earbuds", "Pebble", "headphones", 7900, 12, True),
    ProductSpec("PR-10017", "Vista 55in 4K OLED TV", "Lumen", "tv", 139900, 24),
    ProductSpec("PR-10018", "Vista 65in 4K OLED TV", "Lumen", "tv", 219900, 24),
    ProductSpec("PR-10019", "Brightline 43in LED TV", "Corvid", "tv", 34900, 12),
    ProductSpec("PR-10020", "Cinema Soundbar 5.1", "Sonique", "tv", 59900, 24),
    ProductSpec("PR-10021", "Alpha M50 Mirrorless Camera", "Kestrel", "camera", 129900, 24),
    ProductSpec("PR-10022", "Alpha 24-70mm f/2.8 Lens", "Kestrel", "camera", 99900, 24),
    ProductSpec("PR-10023", "ActionCam 5", "Kestrel", "camera", 34900, 12),
    ProductSpec("PR-10024", "SkyView Mini Drone", "Kestrel", "camera", 74900, 12),
    ProductSpec("PR-10025", "Pulse 4 Smartwatch", "Orbit", "wearable", 39900, 12),
    ProductSpec("PR-10026", "Pulse 4 Ultra Smartwatch", "Orbit", "wearable", 79900, 12),
    ProductSpec("PR-10027", "Stride Fitness Band", "Helio", "wearable", 9900, 12),
    ProductSpec("PR-10028", "Nexus 5 Game Console", "Arden", "gaming", 49900, 12),
    ProductSpec("PR-10029", "Nexus 5 Wireless Controller", "Arden", "gaming", 6900, 12),
    ProductSpec("PR-10030", "Portable Gaming Handheld X", "Corvid", "gaming", 54900, 12),
    ProductSpec("PR-10031", "65W USB-C Charger", "Pebble", "accessory", 3900, 12),
    ProductSpec("PR-10032", "USB-C Dock 11-in-1", "Corvid", "accessory", 15900, 24),
    ProductSpec("PR-10033", "27in 4K Monitor", "Lumen", "accessory", 42900, 36),
    ProductSpec("PR-10034", "Mechanical Keyboard K2", "Arden", "accessory", 12900, 24),
    ProductSpec("PR-10035", "Ergo Wireless Mouse", "Arden", "accessory", 5900, 12),
    ProductSpec("PR-10036", "2 TB Portable SSD", "Helio", "accessory", 17900, 36),
    ProductSpec("PR-10037", "Mesh Wi-Fi 6E System (3-pack)", "Corvid", "accessory", 39900, 24),
    ProductSpec("PR-10038", "Smart Speaker Home", "Sonique", "accessory", 9900, 12),
    ProductSpec("PR-10039", "Laptop Sleeve 14in", "Pebble", "accessory", 2900, 0, True),
    ProductSpec("PR-10040", "4K Streaming Stick", "Orbit", "accessory", 4900, 12),
)

PROMOTIONS: tuple[PromotionSpec, ...] = (
    PromotionSpec(
        "SUMMER15", "15% off summer sale", 15, None, 20000, None, date(2026, 6, 1), date(2026, 8, 31)
    ),
    PromotionSpec(
        "BACK2SCHOOL",
        "$50 off laptops and tablets orders over $500",
        None,
        5000,
        50000,
        None,
        date(2026, 8, 1),
        date(2026, 9, 15),
    ),
    PromotionSpec(
        "FALL10", "10% off orders over $100", 10, None, 10000, None, date(2026, 9, 1), date(2026, 10, 31)
    ),
    PromotionSpec(
        "GOLD20",
        "20% off for Gold and Platinum members",
        20,
        None,
        0,
        "gold",
        date(2026, 9, 1),
        date(2026, 12, 31),
    ),
    PromotionSpec(
        "SAVE25", "$25 off orders over $250", None, 2500, 25000, None, date(2026, 9, 20), date(2026, 10, 20)
    ),
    PromotionSpec(
        "WELCOME5", "$5 off a first order", None, 500, 2000, None, date(2026, 1, 1), date(2026, 12, 31)
    ),
)
