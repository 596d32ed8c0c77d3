#!/usr/bin/env bash
# The README's "Zero-shot judges and a model teacher" figures, on CPU: rollouts of both stores,
# the RecRM databases, SmolLM2 as zero-shot judge and as teacher, and the augmentation ablation.
#   bash train/scripts/recrm_smollm2_figures.sh [OUT=runs/p5] [LIMIT=12]     (~40 min on 2 cores)
set -euo pipefail
OUT=${1:-runs/p5}
LIMIT=${2:-12}
mkdir -p "$OUT"
for store in Supermarket HomeFurnishings; do
  for agent in heuristic plain random; do
    python -m eval.rollout --env "SituRec-$store-v0" --agent $agent --tasks 0-39 --out "$OUT/$store-$agent" \
      --no-report --env-kwargs '{"text_only": true}'
  done
  data="$OUT/data-$store"
  python -m recrm.data synthesize --runs "$OUT/$store-heuristic" "$OUT/$store-plain" "$OUT/$store-random" \
    --out "$data" --no-hf
  python -m recrm.evaluate --scorer rule --scorer llm:hf:gguf:smollm2 --data "$data" --limit "$LIMIT" \
    > "$OUT/eval-$store.md"
  python -m recrm.data label "$data" --teacher hf:gguf:smollm2 --out "$OUT/teacher-$store" --split test --limit "$LIMIT"
  python -m recrm.evaluate --scorer rule --data "$OUT/teacher-$store" --labels teacher --limit "$LIMIT" \
    > "$OUT/eval-teacher-$store.md"
done
# The augmentation ablation: one consistency judge with and one without the synthesised negatives.
data="$OUT/data-Supermarket"
for neg in true false; do
  python -m recrm.train consistency --data "$data" --model gguf:smollm2 --out "$OUT/abl-consistency-neg-$neg" \
    --max_steps 8 --batch_size 4 --max_length 384 --learning_rate 1e-4 --judge_format short \
    --synthesised_negatives $neg
done
python -m recrm.evaluate --data "$data" --limit 24 --scorer consistency=rule \
  --scorer "consistency=model:$OUT/abl-consistency-neg-true" --scorer "consistency=model:$OUT/abl-consistency-neg-false" \
  > "$OUT/abl-eval.md"
echo "tables: $OUT/eval-*.md, $OUT/eval-teacher-*.md, $OUT/abl-eval.md"
