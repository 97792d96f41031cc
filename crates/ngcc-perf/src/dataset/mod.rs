//! The dataset: JSON schema (the only place with JSON field names), loading, publishing, and
//! the catalog files that go with it.

pub mod catalog;
pub mod catalog_init;
pub mod load;
pub mod publish;
pub mod schema;
