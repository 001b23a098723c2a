"""Documentation tooling, not part of the product: screenshot makers for docs/."""
