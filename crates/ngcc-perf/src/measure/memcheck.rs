//! Reading memcheck's XML log of a ct taint run (protocol version 4) into sites: each error
//! about a secret (a conditional jump, an address, a system call argument) is attributed to
//! the innermost frame in the candidate library that has a source line, in the stage it was
//! first reported in (stages open with a client message `<marker> <stage>`); errors are
//! deduplicated by file, line and kind, with memcheck's own counts summed.

use crate::dataset::schema::{CtSite, CtSiteKind};
use std::collections::BTreeMap;

/// What a log says, before paths are made relative.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Parsed {
    pub sites: Vec<CtSite>,
    pub errors_outside: u64,
    pub errors_before_stages: u64,
    pub stages_seen: Vec<String>,
}

struct Frame {
    obj: String,
    func: String,
    dir: String,
    file: String,
    line: Option<u64>,
}

fn text<'a>(n: roxmltree::Node<'a, 'a>, tag: &str) -> Option<&'a str> {
    n.children()
        .find(|c| c.has_tag_name(tag))
        .and_then(|c| c.text())
}

fn frames(stack: Option<roxmltree::Node>) -> Vec<Frame> {
    let Some(stack) = stack else {
        return Vec::new();
    };
    stack
        .children()
        .filter(|f| f.has_tag_name("frame"))
        .map(|f| Frame {
            obj: text(f, "obj").unwrap_or("").to_string(),
            func: text(f, "fn").unwrap_or("").to_string(),
            dir: text(f, "dir").unwrap_or("").to_string(),
            file: text(f, "file").unwrap_or("").to_string(),
            line: text(f, "line").and_then(|l| l.trim().parse().ok()),
        })
        .collect()
}

/// Parses `xml`. `is_library(obj)` says whether a frame's object is the candidate library;
/// `path(dir, file)` names a site's file; `marker` opens a stage, `public_stage` is the stage
/// whose new sites depend on public data.
/// The one way a memcheck log cannot be read: it is not XML (the ct phase records it as the
/// process's error with Display).
#[derive(Debug, thiserror::Error)]
#[error("memcheck XML: {0}")]
pub struct BadXml(#[from] roxmltree::Error);

pub fn parse(
    xml: &str,
    is_library: &dyn Fn(&str) -> bool,
    path: &dyn Fn(&str, &str) -> String,
    marker: &str,
    public_stage: &str,
) -> Result<Parsed, BadXml> {
    let doc = roxmltree::Document::parse(xml)?;
    let root = doc.root_element();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    if let Some(ec) = root.children().find(|c| c.has_tag_name("errorcounts")) {
        for pair in ec.children().filter(|c| c.has_tag_name("pair")) {
            if let (Some(u), Some(c)) = (text(pair, "unique"), text(pair, "count")) {
                counts.insert(u.to_string(), c.trim().parse().unwrap_or(1));
            }
        }
    }
    let mut out = Parsed::default();
    let mut stage: Option<String> = None;
    // (file, line, kind) → site
    let mut sites: BTreeMap<(String, u64, String), CtSite> = BTreeMap::new();
    for node in root.children().filter(|n| n.is_element()) {
        if node.has_tag_name("clientmsg") {
            let t = text(node, "text").unwrap_or("").trim();
            if let Some(rest) = t.strip_prefix(marker) {
                let s = rest.trim().to_string();
                out.stages_seen.push(s.clone());
                stage = Some(s);
            }
            continue;
        }
        if !node.has_tag_name("error") {
            continue;
        }
        let Some(kind) = text(node, "kind").and_then(CtSiteKind::of_memcheck) else {
            continue;
        };
        let count = text(node, "unique")
            .and_then(|u| counts.get(u).copied())
            .unwrap_or(1);
        let Some(stage) = stage.as_deref() else {
            out.errors_before_stages += count;
            continue;
        };
        let fr = frames(node.children().find(|c| c.has_tag_name("stack")));
        let Some(at) = fr
            .iter()
            .position(|f| is_library(&f.obj) && f.line.is_some() && !f.file.is_empty())
        else {
            out.errors_outside += count;
            continue;
        };
        let f = &fr[at];
        let file = path(&f.dir, &f.file);
        let line = f.line.unwrap_or(0);
        let via = (at > 0)
            .then(|| fr[0].func.clone())
            .filter(|v| !v.is_empty());
        let key = (file.clone(), line, kind.as_str().to_string());
        let site = sites.entry(key).or_insert_with(|| CtSite {
            file,
            line,
            kind: kind.clone(),
            function: f.func.clone(),
            via,
            count: 0,
            public_sk_data: stage == public_stage,
        });
        site.count += count;
    }
    out.sites = sites.into_values().collect();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const XML: &str = r#"<?xml version="1.0"?>
<valgrindoutput>
<protocolversion>4</protocolversion>
<error><unique>0x1</unique><tid>1</tid><kind>UninitCondition</kind>
  <stack><frame><ip>0x1</ip><obj>/job/ngcc-perf</obj><fn>seed</fn></frame></stack></error>
<clientmsg><tid>1</tid><text>mk secret
</text></clientmsg>
<error><unique>0x2</unique><tid>1</tid><kind>UninitCondition</kind>
  <stack><frame><ip>0x2</ip><obj>/job/lib.so</obj><fn>dec</fn><dir>/c/ref</dir><file>kem.c</file><line>42</line></frame></stack></error>
<error><unique>0x3</unique><tid>1</tid><kind>UninitValue</kind>
  <stack><frame><ip>0x3</ip><obj>/usr/lib/libc.so.6</obj><fn>memcmp</fn></frame>
  <frame><ip>0x4</ip><obj>/job/lib.so</obj><fn>verify</fn><dir>/c/ref</dir><file>kem.c</file><line>7</line></frame></stack></error>
<error><unique>0x4</unique><tid>1</tid><kind>UninitCondition</kind>
  <stack><frame><ip>0x5</ip><obj>/job/ngcc-perf</obj><fn>fits</fn></frame></stack></error>
<clientmsg><tid>1</tid><text>mk whole-sk
</text></clientmsg>
<error><unique>0x5</unique><tid>1</tid><kind>UninitCondition</kind>
  <stack><frame><ip>0x6</ip><obj>/job/lib.so</obj><fn>gen_matrix</fn><dir>/c/ref</dir><file>indcpa.c</file><line>99</line></frame></stack></error>
<errorcounts><pair><count>3</count><unique>0x2</unique></pair><pair><count>2</count><unique>0x1</unique></pair></errorcounts>
</valgrindoutput>"#;

    #[test]
    fn sites_by_line_kind_and_stage() {
        let p = parse(
            XML,
            &|o| o == "/job/lib.so",
            &|d, f| format!("{}/{f}", d.trim_start_matches("/c/")),
            "mk",
            "whole-sk",
        )
        .unwrap();
        assert_eq!(p.errors_before_stages, 2);
        assert_eq!(p.errors_outside, 1);
        assert_eq!(p.stages_seen, ["secret", "whole-sk"]);
        type Row<'a> = (String, u64, &'a str, u64, bool, Option<String>);
        let s: Vec<Row> = p
            .sites
            .iter()
            .map(|s| {
                (
                    s.file.clone(),
                    s.line,
                    s.kind.as_str(),
                    s.count,
                    s.public_sk_data,
                    s.via.clone(),
                )
            })
            .collect();
        assert_eq!(
            s,
            vec![
                ("ref/indcpa.c".into(), 99, "branch", 1, true, None),
                (
                    "ref/kem.c".into(),
                    7,
                    "index",
                    1,
                    false,
                    Some("memcmp".into())
                ),
                ("ref/kem.c".into(), 42, "branch", 3, false, None),
            ]
        );
    }
}
