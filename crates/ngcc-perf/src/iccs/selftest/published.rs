//! The published test values (iccs-api.md §2.6, §3.5) and the NIST/HQC KAT RNG vectors.

use super::{Check, Side, counter_hex, eq, unhex};
use crate::util::hexs;
use ngcc_iccs::ctr_drbg::NistCtrDrbg;
use ngcc_iccs::hash_drbg::{hash_df, hash_kat_nonce, pkc_seed_nonce, sig_msg_nonce};
use ngcc_iccs::hmac::{PSEUDO_KEY, hmac_sm3_bits};
use ngcc_iccs::hqc_prng::HqcKatRng;
use ngcc_iccs::{sm3, vectors as vx};
pub fn sm3_vectors(side: Side) -> Check {
    for &(msg, bits, want) in vx::SM3_ROWS {
        eq(
            &format!("sm3({msg:.16}…, {bits})"),
            &side.sm3(&unhex(msg), bits),
            want,
        )?;
    }
    Ok(())
}

pub fn pseudohash_vectors(side: Side) -> Check {
    for &(d, msg, bits, want) in vx::PSEUDOHASH_ROWS {
        let got = side
            .pseudohash(d, &unhex(msg), bits)
            .map_err(|rc| format!("pseudohash({d}) returned {rc}"))?;
        eq(&format!("pseudohash({d}, {msg}, {bits})"), &got, want)?;
    }
    Ok(())
}

pub fn xof_vectors(side: Side) -> Check {
    for &(n, msg, bits, want) in vx::XOF_ROWS {
        eq(
            &format!("pseudoXOF({n}, {msg:.16}, {bits})"),
            &side.xof(n, &unhex(msg), bits),
            want,
        )?;
    }
    Ok(())
}

pub fn drng_kat_seeds(side: Side) -> Check {
    let mut d = side.drng(&pkc_seed_nonce());
    let [v, c, _] = d.state();
    eq("V0", &v, vx::KAT_SEED_V0)?;
    eq("C0", &c, vx::KAT_SEED_C0)?;
    for (i, want) in vx::KAT_SEEDS.iter().enumerate() {
        eq(&format!("Seed of record {i}"), &d.get(512), want)?;
    }
    let [v, _, rc] = d.state();
    eq("V after 10 draws", &v, vx::KAT_SEED_V_AFTER_10)?;
    eq("reseed_counter after 10 draws", &rc, &counter_hex(11))
}

pub fn drng_call_count(side: Side) -> Check {
    let mut d = side.drng(&pkc_seed_nonce());
    for (bits, want) in vx::CALL_COUNT_DRAWS {
        eq(&format!("get({bits})"), &d.get(bits), want)?;
    }
    eq("reseed_counter", &d.state()[2], &counter_hex(4))
}

pub fn drng_sig_messages(side: Side) -> Check {
    let mut d = side.drng(&sig_msg_nonce());
    for (i, want) in vx::SIG_MESSAGES.iter().enumerate() {
        eq(
            &format!("M of record {i}"),
            &d.get(8 * (56 + 8 * i as u64)),
            want,
        )?;
    }
    Ok(())
}

pub fn drng_perf_seed(side: Side) -> Check {
    let seed: Vec<u8> = (0..48).collect();
    let mut d = side.drng(&seed);
    let [v, c, _] = d.state();
    eq("V0", &v, vx::PERF_SEED_V0)?;
    eq("C0", &c, vx::PERF_SEED_C0)?;
    eq("first get(256)", &d.get(256), vx::PERF_SEED_GET256[0])?;
    eq("second get(256)", &d.get(256), vx::PERF_SEED_GET256[1])?;
    eq(
        "fresh get(512)",
        &side.drng(&seed).get(512),
        vx::PERF_SEED_GET512,
    )
}

pub fn drng_empty_seed(side: Side) -> Check {
    let mut d = side.drng(&[]);
    eq("V0", &d.state()[0], vx::EMPTY_SEED_V0)?;
    eq("first get(256)", &d.get(256), vx::EMPTY_SEED_GET256)
}

pub fn drng_hash_df(side: Side) -> Check {
    // Instantiate sets V = Hash_df(seed).
    eq(
        "V0 of seed \"abc\"",
        &side.drng(b"abc").state()[0],
        vx::HASH_DF_ABC,
    )?;
    if let Side::Model = side {
        eq(
            "Hash_df(\"abc\", 440)",
            &hash_df(b"abc", 440),
            vx::HASH_DF_ABC,
        )?;
    }
    Ok(())
}

pub fn drng_kat_2_12(side: Side) -> Check {
    let mut d = side.drng(&hash_kat_nonce(b"KAT_2_12"));
    let mut digests = Vec::new();
    for (len, want) in vx::KAT_2_12_MSGS.iter().enumerate() {
        let mut buf = [0u8; 512];
        d.get_into(&mut buf, len as u64);
        let n = len.div_ceil(8);
        eq(&format!("Msg of L = {len}"), &buf[..n], want)?;
        if buf[n..].iter().any(|&b| b != 0) {
            return Err(format!("L = {len}: wrote past byte {n}"));
        }
        digests.push(side.sm3(&buf, len as u64));
    }
    for (len, want) in vx::KAT_2_12_SM3_DSTS {
        eq(
            &format!("SM3 Dst of L = {len}"),
            &digests[len as usize],
            want,
        )?;
    }
    Ok(())
}

pub fn drng_kat_loop(side: Side) -> Check {
    let m0 = hexs::upper(&side.drng(&hash_kat_nonce(b"KAT_Loop")).get(8192));
    if m0.starts_with(vx::KAT_LOOP_M0_PREFIX) && m0.ends_with(vx::KAT_LOOP_M0_SUFFIX) {
        Ok(())
    } else {
        Err(format!("m0 = {}…{}", &m0[..32], &m0[m0.len() - 16..]))
    }
}

pub fn hmac_key() -> Check {
    let key = [sm3::sm3(b"3.14159265358979"), sm3::sm3(b"2.71828182845904")].concat();
    eq("KEY", &key, &hexs::upper(&PSEUDO_KEY))?;
    eq(
        "HMAC(KEY, \"abc\")",
        &hmac_sm3_bits(&PSEUDO_KEY, b"abc", 24),
        vx::HMAC_KEY_ABC,
    )
}

pub fn nist_ctr_drbg() -> Check {
    let entropy: [u8; 48] = std::array::from_fn(|i| i as u8);
    let perso: [u8; 48] = std::array::from_fn(|i| 0xA0 + i as u8);
    let mut d = NistCtrDrbg::new(&entropy, None);
    for (len, want) in vx::NIST_DRAWS {
        eq(&format!("randombytes({len})"), &d.generate(len), want)?;
    }
    eq(
        "with personalization",
        &NistCtrDrbg::new(&entropy, Some(&perso)).generate(64),
        vx::NIST_PERSO_DRAW64,
    )
}

pub fn hqc_prng() -> Check {
    let entropy: [u8; 48] = std::array::from_fn(|i| i as u8);
    let perso: [u8; 48] = std::array::from_fn(|i| 0xA0 + i as u8);
    let mut r = HqcKatRng::new(&entropy, None);
    for (len, want) in vx::HQC_DRAWS {
        eq(&format!("randombytes({len})"), &r.generate(len), want)?;
    }
    r.release();
    eq(
        "with personalization",
        &HqcKatRng::new(&entropy, Some(&perso)).generate(64),
        vx::HQC_PERSO_DRAW64,
    )
}
