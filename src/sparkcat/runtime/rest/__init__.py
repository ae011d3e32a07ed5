"""rest."""
