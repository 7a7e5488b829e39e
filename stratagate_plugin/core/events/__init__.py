"""Event cards: their shape and rules, weights, ranking and the event use cases."""
