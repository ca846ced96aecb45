"""Helpers below the API types, as k8s.io/apimachinery/pkg/util is below the API: the syntax
rules of names, label keys and values (validation), and natural order for numbered names
(natural)."""
