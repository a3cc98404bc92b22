//! The assembler and disassembler round-trip.

use pccx_golden::asm::{disasm, format_program, parse_program, Item, Program};
use pccx_golden::isa::{decode, layout, layout_of, Decoded};
use proptest::prelude::*;

/// A field value: zero, small, all ones or anything (truncated to the
/// field), so that "print only when non-zero" paths are all exercised.
fn field_value() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0), 1u64..8, Just(u64::MAX), any::<u64>()]
}

/// A legal word of every opcode, with random fields, reserved bits included.
fn legal_word() -> impl Strategy<Value = u64> {
    (0u8..5, prop::collection::vec(field_value(), 7)).prop_map(|(opcode, values)| {
        let mut word = layout::OPCODE.put(opcode.into());
        for (field, value) in layout_of(opcode).iter().zip(values) {
            word |= field.put(value);
        }
        match opcode {
            4 => word &= !(1 << 59),                     // cvo_func < 8
            3 => word &= !(1 << 59),                     // dest_cache < 2
            2 if word >> 58 & 3 == 3 => word ^= 1 << 59, // not host -> host
            _ => {}
        }
        word
    })
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        4 => legal_word().prop_map(Item::Instr),
        1 => any::<u64>().prop_map(Item::Instr),
        1 => any::<u32>().prop_map(Item::Idle),
        1 => (any::<u32>(), any::<u32>()).prop_map(|(offset, value)| Item::RegWrite { offset, value }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn legal_words_round_trip(word in legal_word()) {
        prop_assert!(matches!(decode(word), Decoded::Legal(_)));
        let line = disasm(word);
        prop_assert!(!line.contains('\n') && !line.starts_with(".word"), "{}", line);
        let program = parse_program(&line).map_err(|e| TestCaseError::fail(format!("{line}: {e}")))?;
        prop_assert_eq!(program.items, vec![Item::Instr(word)], "{}", line);
    }

    #[test]
    fn any_word_round_trips(word in any::<u64>()) {
        let line = disasm(word);
        let program = parse_program(&line).map_err(|e| TestCaseError::fail(format!("{line}: {e}")))?;
        prop_assert_eq!(program.items, vec![Item::Instr(word)], "{}", line);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn programs_round_trip(items in prop::collection::vec(item(), 0..40)) {
        let program = Program { items };
        let text = format_program(&program);
        let parsed = parse_program(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(parsed, program);
    }
}
