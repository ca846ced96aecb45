"""nodeaffinity."""
