//! The dataset: JSON schema (the only place with JSON field names), loading, publishing,
//! merging shards, and the catalog files that go with it.

pub(crate) mod catalog;
pub(crate) mod catalog_init;
pub mod count;
pub mod guide;
pub mod load;
pub mod memory;
pub(crate) mod merge;
pub(crate) mod publish;
pub mod quarantine;
pub mod schema;
