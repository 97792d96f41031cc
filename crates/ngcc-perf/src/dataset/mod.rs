//! The dataset: JSON schema (the only place with JSON field names), publish and validate.

pub mod catalog_init;
pub mod containment;
pub mod load;
pub mod publish;
pub mod schema;
pub mod validate;
