"""Façade facet left empty: reading event cards moved to ``events.service.EventsService``."""

from ..service_base import ServiceBase


class DerivationFacet(ServiceBase):
    """No use cases left; the façade can drop this base."""
