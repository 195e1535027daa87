"""ablation: build every arm's corpus (sharing what arms agree on), train the same proxy model on each for a
fixed token budget and several seeds, score every run on one shared held-out set, report which arm wins."""

from __future__ import annotations

from prefect import flow

from flows.corpus_rebuild import run_corpus
from pretrain_core.ablation.report import AblationReport
from pretrain_core.ablation.spec import CPU_PRESET, AblationSpec, load_ablation
from tasks.ablation import prepare_heldout, report_ablation, score_proxy_run
from tasks.training import launch_training


@flow(name="ablation", log_prints=True)
def ablation(spec: AblationSpec | None = None) -> AblationReport:
    """Run an ablation; reruns reuse every finished stage, run and score.

    Args:
        spec: the arms (overrides on one base config), the baseline, seeds, token budget and held-out set; empty:
            the CPU preset (raw vs curated vs no quality filter on the demo corpus).
    """
    spec = spec or load_ablation(CPU_PRESET)
    for arm in spec.arms:
        run_corpus(spec.arm_config(arm))
    heldout_url, items_url = prepare_heldout(spec)
    score_urls = []
    for arm in spec.arms:
        for seed in spec.seed_values():
            train_cfg = spec.train_config(arm, seed)
            launch_training(train_cfg, run_name=f"{spec.name}-{arm}-seed-{seed}")
            score_urls.append(score_proxy_run(arm, seed, train_cfg.output_url, heldout_url, items_url))
    first = spec.train_config(spec.baseline, spec.first_seed)
    facts = {
        "seeds per arm": spec.seeds,
        "tokens per run": first.max_steps * first.tokens_per_step,
        "steps": first.max_steps,
        "model": first.model.preset or f"{first.model.n_layer}x{first.model.d_model}",
        "held-out arm": spec.heldout_arm,
    }
    report = report_ablation(spec, score_urls, facts)
    print(report.markdown)
    return report
