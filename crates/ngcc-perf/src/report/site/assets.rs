//! The site's only stylesheet and script, embedded so the binary writes a complete site.

pub const CSS: &str = include_str!("assets/site.css");
pub const JS: &str = include_str!("assets/site.js");
