"""The long-term timeline: filtered, paged event listings and one event's full story."""
