"""An event's stored BM25 document, the events capability's rule that storage applies
inside every write of an event (insert, edit, purge, index rebuild) without knowing it.

``EVENT_RULES`` is handed to storage when the engine is wired (``core/memory.py``): the
store keeps an event's weighted token counts stamped with ``DOCUMENT_VERSION``, so a new
tokenizer or new field weights make every stored document stale (readers then tokenise
the event's fields) instead of wrong.
"""

import zlib

from ..retrieval.bm25 import weighted_tokens
from ..text.search_terms import TOKENIZER_VERSION
from .ranking import FIELD_WEIGHTS, counted_document, event_fields
from .storage import Document, DocumentFields, EventRules
from .weights import SUPERSEDED_CAP

__all__ = ["DOCUMENT_VERSION", "EVENT_RULES", "field_document"]

DOCUMENT_VERSION = zlib.crc32(repr((TOKENIZER_VERSION, FIELD_WEIGHTS)).encode())


def field_document(fields: DocumentFields) -> Document:
    """The weighted BM25 document (token counts, length) of an event's searchable fields."""
    return counted_document(weighted_tokens(event_fields(*fields)))


EVENT_RULES = EventRules(DOCUMENT_VERSION, field_document, SUPERSEDED_CAP)
