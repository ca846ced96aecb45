"""plugins/dynamicresources: DynamicResources."""

from topospread.plugins.dynamicresources.dynamicresources import (
    ERR_NOT_FOUND,
    MSG_NO_NEW_CLAIMS,
    NAME,
    UNMODELLED_CLAIMS,
    DynamicResources,
    new,
)

__all__ = [
    "ERR_NOT_FOUND",
    "MSG_NO_NEW_CLAIMS",
    "NAME",
    "UNMODELLED_CLAIMS",
    "DynamicResources",
    "new",
]
