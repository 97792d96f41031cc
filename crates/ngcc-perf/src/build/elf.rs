//! ELF image size: the sum of MemSiz over PT_LOAD program headers (reference §3.1).

use anyhow::{Context, Result};
use object::read::elf::{ElfFile64, ProgramHeader};
use std::path::Path;

pub fn load_bytes(path: &Path) -> Result<u64> {
    let data = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    load_bytes_of(&data).with_context(|| format!("{}: not a 64-bit ELF file", path.display()))
}

pub fn load_bytes_of(data: &[u8]) -> Result<u64> {
    let elf = ElfFile64::<object::Endianness>::parse(data)?;
    let endian = elf.endian();
    Ok(elf
        .elf_program_headers()
        .iter()
        .filter(|ph| ph.p_type(endian) == object::elf::PT_LOAD)
        .map(|ph| ph.p_memsz(endian))
        .sum())
}
