//! [`select`]'s ambiguity is a value of its result, not a problem text the caller searches.

use super::model::{BuildModel, Item, Program};
use super::package::Folder;
use super::select;
use crate::candidate::Kind;
use std::path::PathBuf;

fn kat_program(name: &str, root: &str) -> Program {
    Program {
        name: name.into(),
        sources: vec![Item::new(format!("{root}/PQCgenKAT_kem.c"), "Makefile:1")],
        ..Program::default()
    }
}

fn choose(names: &[&str]) -> (String, Option<String>) {
    let root = "/pkg/Reference_Implementation/Foo-L3";
    let model = BuildModel {
        file: PathBuf::from(root).join("Makefile"),
        programs: names.iter().map(|n| kat_program(n, root)).collect(),
        notes: Vec::new(),
        problems: Vec::new(),
    };
    let folder = Folder {
        root: root.into(),
        rel: "Reference_Implementation/Foo-L3".into(),
        header: "api.h".into(),
        kind: Kind::Kem,
        derived: "Foo-L3".into(),
    };
    let s = select(&model, &folder).expect("a KAT program");
    assert!(s.is_kat);
    (s.program.name.clone(), s.ambiguous)
}

#[test]
fn the_folder_name_decides_or_the_choice_says_it_was_ambiguous() {
    let (name, ambiguous) = choose(&["kat_l1", "kat_l3"]);
    assert_eq!((name.as_str(), ambiguous), ("kat_l3", None));
    let (name, ambiguous) = choose(&["kat_x", "kat_y"]);
    assert_eq!(name, "kat_x");
    let why = ambiguous.expect("two programs the folder name does not pick");
    assert!(
        why.starts_with("AMBIGUOUS: 2 programs in Makefile (kat_x, kat_y)"),
        "{why}"
    );
    let (_, ambiguous) = choose(&["kat_only"]);
    assert_eq!(ambiguous, None);
}
