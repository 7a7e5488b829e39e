"""Topic batches: a batch's input read and its projection committed, each one store unit."""
