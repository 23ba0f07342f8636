//! Gradient-boosted regression trees over the stage-two features, fitted to the same listwise
//! (softmax) loss as the linear stage, on top of its scores: interactions the linear stage cannot
//! express ("a resource lift counts only when the text also matches").
//!
//! Deterministic: features are cut into at most [`BINS`] bins at fixed quantiles, trees grow
//! level by level to a fixed depth, every sum runs in a fixed order, values are rounded as the
//! model file stores them.

/// Most bins per feature.
pub const BINS: usize = 16;

/// Settings of the boosting.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BoostOptions {
    /// Number of trees (0: no boosting).
    pub trees: usize,
    /// Depth of each tree.
    pub depth: usize,
    /// Shrinkage of each tree's leaves.
    pub learning_rate: f32,
    /// L2 penalty on leaf values.
    pub lambda: f32,
    /// Least hessian sum in a child.
    pub min_child: f32,
    /// The trees see (and re-rank) this many of stage two's best candidates by the linear score.
    pub top: usize,
    /// Evidence never counts against an action in the trees either: their sum does not
    /// decrease along an evidence feature (as the linear stages keep evidence weights ≥ 0).
    pub increasing_evidence: bool,
}

impl Default for BoostOptions {
    fn default() -> Self {
        BoostOptions {
            trees: 200,
            depth: 3,
            learning_rate: 0.1,
            lambda: 1.0,
            min_child: 1.0,
            top: 20,
            increasing_evidence: true,
        }
    }
}

/// One tree: a complete binary tree of `depth` levels. Internal node `k` (breadth first, root
/// 0) sends `x` left when `x[feature[k]] <= threshold[k]` (a feature of `u16::MAX` sends every
/// `x` left); leaf `j` adds `leaf[j]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Tree {
    /// Feature of each internal node.
    pub feature: Vec<u16>,
    /// Threshold of each internal node.
    pub threshold: Vec<f32>,
    /// Value of each leaf.
    pub leaf: Vec<f32>,
}

/// No split at this node.
pub const NO_SPLIT: u16 = u16::MAX;

impl Tree {
    /// The tree's value for dense features `x`.
    pub fn eval(&self, x: &[f32]) -> f32 {
        let internal = self.feature.len();
        let mut k = 0usize;
        while k < internal {
            let f = self.feature[k];
            let left =
                f == NO_SPLIT || x.get(f as usize).copied().unwrap_or(0.0) <= self.threshold[k];
            k = 2 * k + if left { 1 } else { 2 };
        }
        self.leaf[k - internal]
    }
}

/// The sum of every tree's value.
pub fn eval(trees: &[Tree], x: &[f32]) -> f32 {
    trees.iter().map(|t| t.eval(x)).sum()
}

/// The trees of a model laid out for evaluation: every tree's nodes and leaves in two
/// contiguous arrays (a [`Tree`] keeps three vectors of its own, so walking 200 of them is 600
/// scattered reads), every tree padded to the same number of internal nodes so that a tree is
/// a fixed-size chunk and its walk a fixed number of steps. [`Forest::eval`] gives what
/// [`eval`] gives, bit for bit: same leaves, same order of summation.
#[derive(Debug, Clone, Default)]
pub struct Forest {
    /// `internal` nodes per tree: feature and threshold (a node without a split has threshold
    /// +∞ and feature [`NO_SPLIT`], which reads as 0: every `x` goes left).
    nodes: Vec<(u16, f32)>,
    /// `internal + 1` leaves per tree.
    leaves: Vec<f32>,
    /// Internal nodes per tree: the most any tree has.
    internal: usize,
}

impl Forest {
    /// Lays out `trees`. A tree with fewer internal nodes than the largest gains nodes without
    /// a split; each of its leaves moves to where always going left from it ends.
    pub fn new(trees: &[Tree]) -> Forest {
        let internal = trees.iter().map(|t| t.feature.len()).max().unwrap_or(0);
        let mut f = Forest {
            internal,
            ..Forest::default()
        };
        for t in trees {
            let m = t.feature.len();
            f.nodes.extend(
                t.feature
                    .iter()
                    .zip(&t.threshold)
                    .map(|(&f, &t)| (f, if f == NO_SPLIT { f32::INFINITY } else { t })),
            );
            f.nodes
                .extend(std::iter::repeat_n((NO_SPLIT, f32::INFINITY), internal - m));
            let mut leaves = vec![0.0f32; internal + 1];
            for (j, &v) in t.leaf.iter().enumerate() {
                let mut k = m + j;
                while k < internal {
                    k = 2 * k + 1;
                }
                if let Some(slot) = leaves.get_mut(k - internal) {
                    *slot = v;
                }
            }
            f.leaves.extend_from_slice(&leaves);
        }
        f
    }

    /// No trees (every tree has at least one leaf).
    pub fn is_empty(&self) -> bool {
        self.leaves.is_empty()
    }

    /// The sum of every tree's value for dense features `x` (features past its end read as 0).
    pub fn eval(&self, x: &[f32]) -> f32 {
        let n = self.internal;
        if n == 0 {
            return self.leaves.iter().sum();
        }
        self.nodes
            .chunks_exact(n)
            .zip(self.leaves.chunks_exact(n + 1))
            .map(|(nodes, leaves)| {
                let mut k = 0usize;
                while let Some(&(f, t)) = nodes.get(k) {
                    let left = x.get(f as usize).copied().unwrap_or(0.0) <= t;
                    k = 2 * k + 2 - usize::from(left);
                }
                leaves[k - n]
            })
            .sum()
    }
}

/// One training query for boosting: dense features of its candidates, which are correct, and
/// the linear stage's scores.
pub struct BoostGroup {
    /// Dense features, one row per candidate.
    pub x: Vec<Vec<f32>>,
    /// Correct candidates.
    pub positive: Vec<bool>,
    /// Scores before boosting.
    pub base: Vec<f64>,
}

/// Fits trees on `groups` (features of dimension `dim`). With
/// [`BoostOptions::increasing_evidence`], the sum of the trees never decreases along a feature
/// whose `increasing` entry is true (monotone constraints: a split along it must give its left
/// side no more than its right, and bounds every leaf below it accordingly).
pub fn fit(
    groups: &[BoostGroup],
    dim: usize,
    opts: &BoostOptions,
    increasing: &[bool],
) -> Vec<Tree> {
    let increasing = if opts.increasing_evidence {
        increasing
    } else {
        &[]
    };
    if opts.trees == 0 {
        return Vec::new();
    }
    let groups: Vec<&BoostGroup> = groups
        .iter()
        .filter(|g| g.positive.iter().any(|&p| p) && g.positive.len() > 1)
        .collect();
    // Flatten rows.
    let mut rows: Vec<(usize, usize)> = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        for ci in 0..g.x.len() {
            rows.push((gi, ci));
        }
    }
    let value = |r: usize, f: usize| groups[rows[r].0].x[rows[r].1][f];
    // Bin edges per feature: up to BINS distinct values at fixed quantiles.
    let mut edges: Vec<Vec<f32>> = Vec::with_capacity(dim);
    for f in 0..dim {
        let mut v: Vec<f32> = (0..rows.len()).map(|r| value(r, f)).collect();
        v.sort_by(f32::total_cmp);
        v.dedup();
        let e: Vec<f32> = if v.len() <= BINS {
            v
        } else {
            let mut e: Vec<f32> = (1..=BINS).map(|k| v[(k * v.len()) / BINS - 1]).collect();
            e.dedup();
            e
        };
        edges.push(e);
    }
    // Bins by feature, then row (each split scan walks one feature's bins).
    let bins: Vec<Vec<u8>> = (0..dim)
        .map(|f| {
            (0..rows.len())
                .map(|r| {
                    let x = value(r, f);
                    edges[f]
                        .iter()
                        .position(|&e| x <= e)
                        .unwrap_or(edges[f].len().saturating_sub(1)) as u8
                })
                .collect()
        })
        .collect();
    let mut score: Vec<Vec<f64>> = groups.iter().map(|g| g.base.clone()).collect();
    let mut trees = Vec::with_capacity(opts.trees);
    let (lambda, min_child) = (f64::from(opts.lambda), f64::from(opts.min_child));
    for _ in 0..opts.trees {
        // Gradients and hessians of the listwise loss.
        let mut g = vec![0.0f64; rows.len()];
        let mut h = vec![0.0f64; rows.len()];
        let mut r = 0;
        for (gi, grp) in groups.iter().enumerate() {
            let s = &score[gi];
            let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = s.iter().map(|v| (v - max).exp()).collect();
            let z: f64 = e.iter().sum();
            let zp: f64 = e
                .iter()
                .zip(&grp.positive)
                .filter(|(_, p)| **p)
                .map(|(v, _)| v)
                .sum();
            for (ci, &p) in grp.positive.iter().enumerate() {
                let pa = e[ci] / z;
                let pp = if p { e[ci] / zp } else { 0.0 };
                g[r] = pa - pp;
                h[r] = (pa * (1.0 - pa)).max(1e-6);
                r += 1;
            }
        }
        let growth = Growth {
            depth: opts.depth,
            lambda,
            min_child,
            lr: opts.learning_rate,
            increasing,
        };
        let tree = grow(&bins, &edges, &g, &h, &growth);
        for &(gi, ci) in &rows {
            score[gi][ci] += f64::from(tree.eval(&groups[gi].x[ci]));
        }
        trees.push(tree);
    }
    trees
}

/// What one tree's growth needs besides the bins and gradients.
struct Growth<'a> {
    depth: usize,
    lambda: f64,
    min_child: f64,
    lr: f32,
    /// Features along which the tree must not decrease (empty: none).
    increasing: &'a [bool],
}

/// Leaf value of a node (before shrinkage), within its bounds.
fn value(gs: f64, hs: f64, lambda: f64, (lo, hi): (f64, f64)) -> f64 {
    (-gs / (hs + lambda)).clamp(lo, hi)
}

/// Twice the loss reduction of a node holding value `w`: `−(2Gw + (H+λ)w²)`, which is
/// `G²/(H+λ)` at the unconstrained optimum (used as such when no bound applies, so that an
/// unconstrained fit keeps its arithmetic).
fn node_gain(gs: f64, hs: f64, lambda: f64, bounds: (f64, f64)) -> f64 {
    if bounds.0 == f64::NEG_INFINITY && bounds.1 == f64::INFINITY {
        gs * gs / (hs + lambda)
    } else {
        let w = value(gs, hs, lambda, bounds);
        -(2.0 * gs * w + (hs + lambda) * w * w)
    }
}

fn grow(bins: &[Vec<u8>], edges: &[Vec<f32>], g: &[f64], h: &[f64], p: &Growth) -> Tree {
    let (depth, lambda, min_child) = (p.depth, p.lambda, p.min_child);
    let dim = edges.len();
    let internal = (1usize << depth) - 1;
    let mut feature = vec![NO_SPLIT; internal];
    let mut threshold = vec![0.0f32; internal];
    let mut leaf = vec![0.0f32; internal + 1];
    let free = (f64::NEG_INFINITY, f64::INFINITY);
    // Rows of each node at the current level, and the bounds of its values (a split along an
    // increasing feature caps its left subtree and floors its right one at their midpoint).
    let mut level: Vec<(Vec<usize>, (f64, f64))> = vec![((0..g.len()).collect(), free)];
    for d in 0..depth {
        let mut next: Vec<(Vec<usize>, (f64, f64))> = Vec::with_capacity(level.len() * 2);
        for (j, (rows, bounds)) in level.iter().enumerate() {
            let k = (1usize << d) - 1 + j;
            let (gs, hs): (f64, f64) = rows
                .iter()
                .fold((0.0, 0.0), |a, &r| (a.0 + g[r], a.1 + h[r]));
            let parent = node_gain(gs, hs, lambda, *bounds);
            let mut best: Option<(f64, usize, usize)> = None;
            let mut hist = vec![(0.0f64, 0.0f64); BINS];
            for f in 0..dim {
                let nb = edges[f].len();
                if nb < 2 {
                    continue;
                }
                let increasing = p.increasing.get(f).copied().unwrap_or(false);
                for b in hist.iter_mut() {
                    *b = (0.0, 0.0);
                }
                let column = &bins[f];
                for &r in rows {
                    let b = column[r] as usize;
                    hist[b].0 += g[r];
                    hist[b].1 += h[r];
                }
                let (mut gl, mut hl) = (0.0, 0.0);
                for (b, &(bg, bh)) in hist.iter().enumerate().take(nb - 1) {
                    gl += bg;
                    hl += bh;
                    let (gr, hr) = (gs - gl, hs - hl);
                    if hl < min_child || hr < min_child {
                        continue;
                    }
                    if increasing && value(gl, hl, lambda, *bounds) > value(gr, hr, lambda, *bounds)
                    {
                        continue;
                    }
                    let gain = node_gain(gl, hl, lambda, *bounds)
                        + node_gain(gr, hr, lambda, *bounds)
                        - parent;
                    if gain > 1e-12 && best.is_none_or(|(bg, _, _)| gain > bg) {
                        best = Some((gain, f, b));
                    }
                }
            }
            match best {
                Some((_, f, b)) => {
                    feature[k] = f as u16;
                    // Rounded up as the file stores it: every value of the left bins stays left.
                    threshold[k] = ((f64::from(edges[f][b]) * 1e6).ceil() / 1e6) as f32;
                    let (left, right): (Vec<usize>, Vec<usize>) =
                        rows.iter().partition(|&&r| bins[f][r] as usize <= b);
                    let (lb, rb) = if p.increasing.get(f).copied().unwrap_or(false) {
                        let sum = |rs: &[usize]| {
                            rs.iter().fold((0.0, 0.0), |a, &r| (a.0 + g[r], a.1 + h[r]))
                        };
                        let ((gl, hl), (gr, hr)) = (sum(&left), sum(&right));
                        let mid =
                            (value(gl, hl, lambda, *bounds) + value(gr, hr, lambda, *bounds)) / 2.0;
                        ((bounds.0, mid), (mid, bounds.1))
                    } else {
                        (*bounds, *bounds)
                    };
                    next.push((left, lb));
                    next.push((right, rb));
                }
                None => {
                    next.push((rows.clone(), *bounds));
                    next.push((Vec::new(), *bounds));
                }
            }
        }
        level = next;
    }
    for (j, (rows, bounds)) in level.iter().enumerate() {
        let (gs, hs): (f64, f64) = rows
            .iter()
            .fold((0.0, 0.0), |a, &r| (a.0 + g[r], a.1 + h[r]));
        let w = if *bounds == free {
            -gs / (hs + lambda)
        } else {
            value(gs, hs, lambda, *bounds)
        };
        leaf[j] = round6((w * f64::from(p.lr)) as f32);
    }
    Tree {
        feature,
        threshold,
        leaf,
    }
}

fn round6(x: f32) -> f32 {
    ((f64::from(x) * 1e6).round() / 1e6) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Groups whose correct candidate has the *smaller* feature 0 (feature 1 tells nothing): an
    /// unconstrained fit learns to count feature 0 against a candidate; constrained along 0,
    /// it may not.
    fn groups() -> Vec<BoostGroup> {
        (0..40)
            .map(|i| {
                let a = (i % 7) as f32 / 7.0;
                BoostGroup {
                    x: vec![vec![a, 0.5], vec![a + 0.5, 0.5], vec![a + 0.3, 0.5]],
                    positive: vec![true, false, false],
                    base: vec![0.0; 3],
                }
            })
            .collect()
    }

    fn along_feature_0(trees: &[Tree], other: f32) -> Vec<f32> {
        (0..=30)
            .map(|k| eval(trees, &[k as f32 / 20.0, other]))
            .collect()
    }

    #[test]
    fn trees_of_different_sizes_are_padded_without_changing_their_values() {
        // A stump, a tree of two levels and a tree with two internal nodes (not complete: its
        // node 2 is a leaf), over two features.
        let trees = [
            Tree {
                feature: vec![0],
                threshold: vec![0.5],
                leaf: vec![1.0, 2.0],
            },
            Tree {
                feature: vec![1, 0, NO_SPLIT],
                threshold: vec![0.25, 0.75, 0.0],
                leaf: vec![10.0, 20.0, 30.0, 40.0],
            },
            Tree {
                feature: vec![1, 0],
                threshold: vec![0.5, 0.1],
                leaf: vec![100.0, 200.0, 300.0],
            },
            Tree {
                feature: vec![],
                threshold: vec![],
                leaf: vec![1000.0],
            },
        ];
        let forest = Forest::new(&trees);
        for a in [0.0, 0.05, 0.3, 0.6, 0.9, f32::NAN] {
            for b in [0.0, 0.2, 0.4, 0.7, f32::NAN] {
                let x = [a, b];
                assert_eq!(
                    forest.eval(&x).to_bits(),
                    eval(&trees, &x).to_bits(),
                    "{x:?}"
                );
            }
        }
        let leaf_only = Forest::new(&trees[3..]);
        assert!(!leaf_only.is_empty());
        assert_eq!(leaf_only.eval(&[]), 1000.0);
    }

    #[test]
    fn the_forest_sums_the_trees_bit_for_bit() {
        let trees = fit(
            &groups(),
            2,
            &BoostOptions {
                trees: 25,
                min_child: 0.1,
                ..BoostOptions::default()
            },
            &[],
        );
        assert!(
            trees
                .iter()
                .any(|t| t.feature.iter().any(|&f| f != NO_SPLIT))
        );
        let forest = Forest::new(&trees);
        for k in 0..=40 {
            for other in [0.0, 0.5, 1.0] {
                let x = [k as f32 / 30.0, other];
                assert_eq!(forest.eval(&x).to_bits(), eval(&trees, &x).to_bits());
            }
        }
        // Features past the end of `x` read as 0, as in `Tree::eval`.
        assert_eq!(forest.eval(&[]).to_bits(), eval(&trees, &[]).to_bits());
        assert!(Forest::new(&[]).is_empty());
    }

    #[test]
    fn increasing_features_never_decrease_the_sum() {
        let opts = BoostOptions {
            trees: 30,
            min_child: 0.1,
            ..BoostOptions::default()
        };
        let free = fit(
            &groups(),
            2,
            &BoostOptions {
                increasing_evidence: false,
                ..opts.clone()
            },
            &[true, false],
        );
        let falls = along_feature_0(&free, 0.5).windows(2).any(|w| w[1] < w[0]);
        assert!(
            falls,
            "the unconstrained fit uses feature 0 against the candidate"
        );
        let tied = fit(&groups(), 2, &opts, &[true, false]);
        assert!(!tied.is_empty());
        for other in [0.0, 0.5, 1.0] {
            let v = along_feature_0(&tied, other);
            assert!(v.windows(2).all(|w| w[1] >= w[0]), "{other}: {v:?}");
        }
        // Deterministic: the same fit twice.
        assert_eq!(tied, fit(&groups(), 2, &opts, &[true, false]));
    }

    /// Leaves under internal node `k` of a tree with `internal` internal nodes.
    fn leaves(t: &Tree, k: usize) -> Vec<f32> {
        let internal = t.feature.len();
        if k >= internal {
            return vec![t.leaf[k - internal]];
        }
        let mut out = leaves(t, 2 * k + 1);
        out.extend(leaves(t, 2 * k + 2));
        out
    }

    /// The committed model's trees: wherever they split along an evidence feature, every leaf
    /// on the left is at most every leaf on the right.
    #[test]
    fn committed_trees_never_count_evidence_against_an_action() {
        let model = super::super::Model::committed().unwrap();
        let names = super::super::features::names();
        for (i, t) in model.trees.iter().enumerate() {
            for (k, &f) in t.feature.iter().enumerate() {
                if f == NO_SPLIT || !super::super::features::is_evidence(&names[f as usize]) {
                    continue;
                }
                let left = leaves(t, 2 * k + 1);
                let right = leaves(t, 2 * k + 2);
                let (lmax, rmin) = (
                    left.iter().copied().fold(f32::NEG_INFINITY, f32::max),
                    right.iter().copied().fold(f32::INFINITY, f32::min),
                );
                assert!(
                    lmax <= rmin + 1e-6,
                    "tree {i} node {k} ({}): {lmax} > {rmin}",
                    names[f as usize]
                );
            }
        }
    }
}
