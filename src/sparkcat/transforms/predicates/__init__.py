"""predicates."""
