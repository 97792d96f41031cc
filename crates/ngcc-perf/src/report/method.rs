//! placeholder
use super::model::View;
pub fn path(sys: &str) -> String {
    format!("performance/method_{sys}.md")
}
pub fn render(_v: &View) -> anyhow::Result<String> {
    Ok(String::new())
}
