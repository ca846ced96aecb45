"""plugins/imagelocality: ImageLocality."""

from topospread.plugins.imagelocality.image_locality import (
    MAX_CONTAINER_THRESHOLD,
    MB,
    MIN_THRESHOLD,
    NAME,
    ImageLocality,
    calculate_priority,
    image_spread,
    new,
    node_image_sizes,
    normalized_image_name,
    scaled_image_score,
)

__all__ = [
    "MAX_CONTAINER_THRESHOLD",
    "MB",
    "MIN_THRESHOLD",
    "NAME",
    "ImageLocality",
    "calculate_priority",
    "image_spread",
    "new",
    "node_image_sizes",
    "normalized_image_name",
    "scaled_image_score",
]
