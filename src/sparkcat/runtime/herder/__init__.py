"""The behaviour both herders share (Kafka's ``AbstractHerder``), split by concern."""
