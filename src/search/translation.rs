//! How well an action's own words translate into the words of a need: IBM model 1, learned
//! from the labelled needs by expectation–maximisation.
//!
//! A need (`close out a reviewer's nit thread`) and the words of the action it was written for
//! (`Resolve a pull review comment`: its name, operationId, summary and path, and its capability
//! text, what its body fields say it can change) are read as a translation of one another: each
//! word of the need was produced by one of the action's words, or by none (the null word).
//! EM finds the probabilities `t(w | c)` that best explain every labelled pair, without a rule
//! or a threshold saying which words go together. The associations beside it (`associations`
//! in `mod.rs`) keep only the pairs that pass fixed tests of count, share and lift; the model
//! keeps every pair with its strength, and shares a need word's probability out among the
//! action's words that compete to explain it.
//!
//! What it gives the ranking, per need word `w` and action `a` whose words are `C`:
//! `ln(λ·P(w|a)/P(w) + 1−λ) − ln(1−λ)`, with `P(w|a) = Σ_{c∈C} t(w|c) / |C|` and `P(w)` the
//! word's share of the needs' words: 0 where the action's words never produce `w`, more the
//! likelier they are to, against how common `w` is. Carried over to any action whose text has
//! the words, labelled or not.

use rustc_hash::FxHashMap as HashMap;

/// EM iterations (ten scored no better in cross-validation: `docs/search.md`, round 28).
pub const ITERATIONS: usize = 5;
/// Share of a need word's likelihood given an action that comes from the translation (the
/// rest from the background, so a word the action cannot produce costs a bounded amount).
/// Chosen by cross-validation among 0.2, 0.5, 0.8 and 0.95 (round 28).
pub const LAMBDA: f32 = 0.8;
/// Translation probabilities below this are dropped after each iteration (they are noise of
/// the uniform start, and would make every word reach every action).
pub const MIN_PROBABILITY: f32 = 1e-3;
/// Scores below this are not stored.
pub const MIN_SCORE: f32 = 0.01;

/// The null word, which produces the need words no action word explains.
const NULL: u32 = u32::MAX;

/// Learns the model from `needs` (each need's word ids) labelled with `owners` (per need, the
/// actions it answers), whose words are `sources` (per action, sorted, distinct word ids),
/// and returns the score of every (need word, action) pair that scores at least
/// [`MIN_SCORE`].
pub fn learn(
    sources: &[Vec<u32>],
    needs: &[Vec<u32>],
    owners: &[Vec<u32>],
) -> Vec<((u32, u32), f32)> {
    if needs.is_empty() {
        return Vec::new();
    }
    // Each (c, w) pair that co-occurs is an entry; each word of each (need, action) pair is a
    // group of cells, one per action word and the null word, that share the word's probability.
    let mut entry_of: HashMap<(u32, u32), u32> = HashMap::default();
    let mut source: Vec<u32> = Vec::new();
    let mut target: Vec<u32> = Vec::new();
    let mut cells: Vec<u32> = Vec::new();
    let mut groups: Vec<u32> = vec![0];
    let mut freq: HashMap<u32, f32> = HashMap::default();
    let mut total = 0.0f32;
    for (need, actions) in needs.iter().zip(owners) {
        let mut words = need.clone();
        words.sort_unstable();
        words.dedup();
        for &w in &words {
            *freq.entry(w).or_default() += 1.0;
            total += 1.0;
        }
        for &a in actions {
            let Some(c) = sources.get(a as usize) else {
                continue;
            };
            for &w in &words {
                for &c in c.iter().chain(std::iter::once(&NULL)) {
                    let next = source.len() as u32;
                    let e = *entry_of.entry((c, w)).or_insert_with(|| {
                        source.push(c);
                        target.push(w);
                        next
                    });
                    cells.push(e);
                }
                groups.push(cells.len() as u32);
            }
        }
    }
    // Sources as dense indices, for the per-source totals.
    let mut source_index: HashMap<u32, u32> = HashMap::default();
    let src: Vec<u32> = source
        .iter()
        .map(|&c| {
            let next = source_index.len() as u32;
            *source_index.entry(c).or_insert(next)
        })
        .collect();
    let mut t = vec![1.0f32; source.len()];
    let mut count = vec![0.0f32; source.len()];
    let mut totals = vec![0.0f32; source_index.len()];
    for _ in 0..ITERATIONS {
        count.fill(0.0);
        for g in groups.windows(2) {
            let group = &cells[g[0] as usize..g[1] as usize];
            let denom: f32 = group.iter().map(|&e| t[e as usize]).sum();
            if denom <= 0.0 {
                continue;
            }
            for &e in group {
                count[e as usize] += t[e as usize] / denom;
            }
        }
        totals.fill(0.0);
        for (e, &c) in count.iter().enumerate() {
            totals[src[e] as usize] += c;
        }
        for (e, p) in t.iter_mut().enumerate() {
            let v = count[e] / totals[src[e] as usize].max(f32::MIN_POSITIVE);
            *p = if v >= MIN_PROBABILITY { v } else { 0.0 };
        }
    }
    // P(w | a) for every action whose words produce w: through the words' postings.
    let postings = super::invert(sources);
    let mut by_target: Vec<u32> = (0..source.len() as u32)
        .filter(|&e| source[e as usize] != NULL && t[e as usize] > 0.0)
        .collect();
    by_target.sort_unstable_by_key(|&e| (target[e as usize], source[e as usize]));
    let floor = (1.0 - LAMBDA).ln();
    let mut p = vec![0.0f32; sources.len()];
    let mut touched: Vec<u32> = Vec::new();
    let mut out = Vec::new();
    for run in by_target.chunk_by(|&x, &y| target[x as usize] == target[y as usize]) {
        let w = target[run[0] as usize];
        for &e in run {
            for &a in postings
                .get(source[e as usize] as usize)
                .into_iter()
                .flatten()
            {
                if p[a as usize] == 0.0 {
                    touched.push(a);
                }
                p[a as usize] += t[e as usize] / sources[a as usize].len() as f32;
            }
        }
        let background = (freq.get(&w).copied().unwrap_or(0.0) / total).max(1e-5);
        touched.sort_unstable();
        for &a in &touched {
            let score = (LAMBDA * p[a as usize] / background + 1.0 - LAMBDA).ln() - floor;
            if score >= MIN_SCORE {
                out.push(((w, a), score));
            }
            p[a as usize] = 0.0;
        }
        touched.clear();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two actions: 0 says `delete` (word 10) and `branch` (11); 1 says `create` (12) and
    /// `branch`. Needs say `nuke` (20) or `wipe` (21) for the first and `make` (22) for the
    /// second, always with `branch` (11).
    fn model() -> HashMap<(u32, u32), f32> {
        let core = vec![vec![10, 11], vec![11, 12]];
        let needs = vec![
            vec![20, 11],
            vec![21, 11],
            vec![20, 11],
            vec![22, 11],
            vec![22, 11],
        ];
        let owners = vec![vec![0], vec![0], vec![0], vec![1], vec![1]];
        learn(&core, &needs, &owners).into_iter().collect()
    }

    #[test]
    fn a_need_word_points_at_the_action_whose_words_produce_it() {
        let m = model();
        let score = |w, a| m.get(&(w, a)).copied().unwrap_or(0.0);
        // `nuke` comes from `delete`: the delete action scores it well above the create one
        // (which reaches it only through the shared `branch`), and `make` the other way round.
        assert!(score(20, 0) > 0.5, "{m:?}");
        assert!(score(20, 0) > 2.0 * score(20, 1), "{m:?}");
        assert!(score(22, 1) > 0.5, "{m:?}");
        assert!(score(22, 1) > 2.0 * score(22, 0), "{m:?}");
        // `branch`, in every need and both actions' text, scores lower than `nuke` does.
        assert!(score(11, 0) < score(20, 0));
    }

    #[test]
    fn it_carries_over_to_actions_without_needs() {
        // A third action that says `delete` and `tag` (13) but has no needs: `nuke` reaches it
        // through `delete`.
        let core = vec![vec![10, 11], vec![11, 12], vec![10, 13]];
        let needs = vec![vec![20, 11], vec![20, 11], vec![22, 11]];
        let owners = vec![vec![0], vec![0], vec![1]];
        let m: HashMap<(u32, u32), f32> = learn(&core, &needs, &owners).into_iter().collect();
        assert!(m.get(&(20, 2)).copied().unwrap_or(0.0) > 0.0, "{m:?}");
    }

    #[test]
    fn no_needs_learn_nothing_and_stray_owners_are_ignored() {
        assert!(learn(&[vec![1]], &[], &[]).is_empty());
        let out = learn(&[vec![1]], &[vec![5]], &[vec![7]]);
        assert!(out.is_empty());
    }
}
