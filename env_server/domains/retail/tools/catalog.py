"""Catalogue tools: products, their prices and stock, and promo codes. None of them needs verification."""

from __future__ import annotations

from sqlalchemy import or_, select

from env_server.domain import ToolContext, tool
from env_server.domains.retail.models import Product, ProductCategory
from env_server.domains.retail.tools._common import _get_product, _get_promotion
from env_server.domains.retail.tools._views import ProductView, PromotionView, product_view


@tool(kind="read")
def search_products(
    ctx: ToolContext, query: str = "", category: ProductCategory | None = None
) -> list[ProductView]:
    """Search the catalogue by words in the product name or brand, optionally within one category.

    Args:
        query: words to look for, e.g. "quietwave" or "oled"; empty lists everything (in the category).
        category: one of laptop, phone, tablet, headphones, tv, camera, wearable, gaming, accessory.
    """
    stmt = select(Product).order_by(Product.id)
    for word in query.split():
        pattern = f"%{word.lower()}%"
        stmt = stmt.where(or_(Product.name.ilike(pattern), Product.brand.ilike(pattern)))
    if category is not None:
        stmt = stmt.where(Product.category == category)
    return [product_view(ctx, p) for p in ctx.session.scalars(stmt)]


@tool(kind="read")
def get_product(ctx: ToolContext, product_id: str) -> ProductView:
    """Read one product: today's price, warranty months, final-sale flag and available stock per warehouse.

    Args:
        product_id: the product's ID, e.g. "PR-10013".
    """
    return product_view(ctx, _get_product(ctx, product_id))


@tool(kind="read")
def get_promotion(ctx: ToolContext, code: str) -> PromotionView:
    """Read a promo code's discount and conditions (minimum subtotal, minimum tier, validity dates).

    Args:
        code: the promo code as the customer gives it, e.g. "FALL10".
    """
    return PromotionView.of(_get_promotion(ctx, code))
