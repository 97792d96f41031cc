//! Compiler invocation, flag sets, content-hash cache, ELF sizes.
