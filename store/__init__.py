"""The HDF5 table store: format (:mod:`.format`), atomic writer (:mod:`.writer`), reader
(:mod:`.reader`), filling a store with the tables it lacks (:mod:`.fill`) and the HTTP
lookup service (:mod:`.service`)."""
from irscale.store.fill import build_store
from irscale.store.format import FORMAT_NAME, FORMAT_VERSION
from irscale.store.reader import Store, open_store

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "Store", "build_store", "open_store"]
