//! Properties of the decoder over the whole 64-bit word space.

use pccx_golden::isa::{decode, fields, op_name, Decoded, IllegalReason};
use pccx_golden::model::ErrorCode;
use proptest::prelude::*;

/// The illegal-encoding rules of docs/semantics.md section 2, written out
/// again from the bit positions, independently of the decoder's tables.
fn expected_reason(word: u64) -> Option<IllegalReason> {
    let opcode = (word >> 60) as u8;
    let cvo_func = ((word >> 56) & 0xF) as u8;
    let dest_cache = ((word >> 58) & 0x3) as u8;
    let (from_host, to_host) = ((word >> 59) & 1 == 1, (word >> 58) & 1 == 1);
    match opcode {
        5..=15 => Some(IllegalReason::Opcode(opcode)),
        4 if cvo_func >= 8 => Some(IllegalReason::CvoFunc(cvo_func)),
        3 if dest_cache >= 2 => Some(IllegalReason::DestCache(dest_cache)),
        2 if from_host && to_host => Some(IllegalReason::Direction),
        _ => None,
    }
}

/// Words with each opcode equally likely and the bits the illegal rules
/// look at (63:56) spread over all their values.
fn any_word() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        (0u64..5, any::<u64>()).prop_map(|(op, body)| op << 60 | body >> 4)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn decode_is_total_and_round_trips(word in any_word()) {
        let fields = fields(word);
        prop_assert_eq!(fields[0], ("opcode", word >> 60));
        match decode(word) {
            Decoded::Legal(instr) => {
                prop_assert_eq!(instr.encode(), word);
                prop_assert_eq!(instr.opcode().bits() as u64, word >> 60);
                prop_assert_eq!(op_name(word), instr.opcode().name());
            }
            Decoded::Illegal { word: w, .. } => {
                prop_assert_eq!(w, word);
                prop_assert_eq!(op_name(word), "ILLEGAL");
            }
        }
    }

    #[test]
    fn illegal_detection_matches_the_rules(word in any_word()) {
        let decoded = decode(word);
        let reason = match decoded {
            Decoded::Legal(_) => None,
            Decoded::Illegal { reason, .. } => Some(reason),
        };
        prop_assert_eq!(reason, expected_reason(word));
        let code = decoded.error_code();
        prop_assert_eq!(code == ErrorCode::Ok, reason.is_none());
    }

    #[test]
    fn fields_cover_every_bit(word in any_word()) {
        // Putting the listed field values back at their positions rebuilds
        // the word: no bit is dropped or shown twice.
        let layout = pccx_golden::isa::layout_of((word >> 60) as u8);
        let mut rebuilt = pccx_golden::isa::layout::OPCODE.put(word >> 60);
        for (field, (name, value)) in layout.iter().zip(&fields(word)[1..]) {
            prop_assert_eq!(field.name, *name);
            rebuilt |= field.put(*value);
        }
        prop_assert_eq!(rebuilt, word);
    }
}
