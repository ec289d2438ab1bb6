"""Shipped data: the Opacus version table (derived from its source) and dataset sizes."""
