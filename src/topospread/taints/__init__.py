"""taints."""
