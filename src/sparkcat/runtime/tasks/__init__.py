"""The task side: leases, source/sink task loops, the record pipeline, task contexts."""
