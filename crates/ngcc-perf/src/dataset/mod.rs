//! The dataset: JSON schema (the only place with JSON field names), publish, merge and validate.

pub mod catalog_init;
pub mod load;
pub mod merge;
pub mod publish;
pub mod schema;
pub mod validate;
