//! placeholder
use super::model::View;
pub const PATH: &str = "performance/symmetric-survey.md";
pub fn render(_v: &View) -> anyhow::Result<String> {
    Ok(String::new())
}
