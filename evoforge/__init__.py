"""evoforge placeholder (filled in below)."""
