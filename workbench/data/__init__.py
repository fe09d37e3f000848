"""Episodes and where they come from: the data types, storage, importers, recording and policies."""
