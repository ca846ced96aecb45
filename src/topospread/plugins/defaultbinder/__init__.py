"""plugins/defaultbinder: DefaultBinder."""

from topospread.plugins.defaultbinder.default_binder import NAME, DefaultBinder, new

__all__ = ["NAME", "DefaultBinder", "new"]
