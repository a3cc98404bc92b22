//! TEMPORARY minimal weight source (replaced by the full version on merge).
pub const MATRIX_STREAM: usize = 0;
pub const VECTOR_STREAM: usize = 1;

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct WeightSource {
    pub seed: u64,
    pub prefix: [Vec<u128>; 2],
}

impl WeightSource {
    pub fn new(seed: u64) -> WeightSource {
        WeightSource {
            seed,
            prefix: [Vec::new(), Vec::new()],
        }
    }
    pub fn beat(&self, stream: usize, index: u64) -> u128 {
        if let Some(b) = self.prefix[stream].get(index as usize) {
            return *b;
        }
        let mut x = self.seed
            ^ (stream as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        u128::from(next()) | (u128::from(next()) << 64)
    }
}
