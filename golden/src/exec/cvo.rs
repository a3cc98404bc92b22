//! CVO (CONTRACT section 7, docs/cvo.md section 1): the elementwise
//! functions, SCALE and REDUCE_SUM over `length` BF16 elements, on the
//! functions of `numerics::cvo`. Every input (vector, scalar, old
//! destination) is read before the first write.

use crate::isa::{Cvo, CvoFunc};
use crate::model::{ErrorCode, Word};
use crate::numerics::bf16::{self, Bf16};
use crate::numerics::cvo::{self, ExactSum};
use crate::state::State;

/// BF16 elements per 128-bit word.
const LANES: usize = 8;

/// Word ranges of an instruction: (vector base, words read for the vector,
/// destination words). SCALE's vector starts after its scalar word.
pub fn layout(op: &Cvo) -> (u64, u64, u64) {
    let words = u64::from(op.length).div_ceil(LANES as u64);
    let src = u64::from(op.src_addr);
    match op.func {
        CvoFunc::Scale => (src + 1, words, words),
        CvoFunc::ReduceSum => (src, words, words.min(1)),
        _ => (src, words, words),
    }
}

fn element(word: Word, i: usize) -> Bf16 {
    Bf16((word >> (16 * i)) as u16)
}

pub fn execute(state: &mut State, seq: u32, op: &Cvo) -> Result<(), ErrorCode> {
    let len = usize::from(op.length);
    if len == 0 {
        return Ok(()); // completes, no effect, no range check
    }
    let (vector_base, vector_words, dst_words) = layout(op);
    let src = u64::from(op.src_addr);
    let dst = u64::from(op.dst_addr);
    // Source range first (SCALE's includes the scalar word), then destination.
    state.check_l2(src, vector_base - src + vector_words)?;
    state.check_l2(dst, dst_words)?;

    let e_max = Bf16(state.e_max);
    let vector = state.read_l2(vector_base, vector_words);
    let old = state.read_l2(dst, dst_words);
    let x = |i: usize| cvo::operand(element(vector[i / LANES], i % LANES), op.sub_emax(), e_max);
    let accumulate = |i: usize, y: Bf16| {
        if op.accm() {
            bf16::add(element(old[i / LANES], i % LANES), y)
        } else {
            y
        }
    };

    let results: Vec<Bf16> = match op.func {
        CvoFunc::ReduceSum => {
            let mut sum = ExactSum::new();
            (0..len).for_each(|i| sum.add(x(i)));
            vec![accumulate(0, sum.round())]
        }
        CvoFunc::Scale => {
            let s = element(state.read_l2(src, 1)[0], 0);
            (0..len)
                .map(|i| accumulate(i, cvo::scale(x(i), s, op.recip_scale())))
                .collect()
        }
        func => (0..len)
            .map(|i| accumulate(i, cvo::unary(func, x(i)).expect("an elementwise function")))
            .collect(),
    };

    for (w, chunk) in results.chunks(LANES).enumerate() {
        let data = chunk
            .iter()
            .enumerate()
            .fold(0u128, |acc, (i, y)| acc | u128::from(y.0) << (16 * i));
        let mask = ((1u16 << chunk.len()) - 1) as u8;
        state.write_l2(seq, dst + w as u64, data, mask);
    }
    Ok(())
}
