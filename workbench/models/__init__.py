"""Fitted models: event-loop yields × loop lag, and scaling laws (power law, USL)."""
