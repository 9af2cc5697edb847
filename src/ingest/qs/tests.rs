//! Importer tests on hand-built byte streams.
