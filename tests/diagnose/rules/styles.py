"""The planted scripts written in styles unlike ours (scripts/styles/, styles2/ ... styles9/), with
what each must get.

Each script plants ONE problem; run with `--fixed` it is its own clean control (same style, the
problem fixed). `kind` says how the planted finding must show:
- "speed": among the top three findings of the planted run;
- "error": an error-level finding;
- "info": reported (a host sync on a CPU run costs no idle time: an info finding with its line);
- "clean": nothing serious in either run (the problem does not apply on this machine).
In every case the control must not get the planted code, nor any warning or error.
Shared by test_planted_styles.py and bench/planted_styles.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

STYLES = Path(__file__).parent / "scripts" / "styles"
STYLES2 = Path(__file__).parent / "scripts" / "styles2"
STYLES3 = Path(__file__).parent / "scripts" / "styles3"
STYLES4 = Path(__file__).parent / "scripts" / "styles4"
STYLES5 = Path(__file__).parent / "scripts" / "styles5"
STYLES6 = Path(__file__).parent / "scripts" / "styles6"
STYLES7 = Path(__file__).parent / "scripts" / "styles7"
STYLES8 = Path(__file__).parent / "scripts" / "styles8"
STYLES9 = Path(__file__).parent / "scripts" / "styles9"
STYLES10 = Path(__file__).parent / "scripts" / "styles10"
STYLES11 = Path(__file__).parent / "scripts" / "styles11"
STYLES12 = Path(__file__).parent / "scripts" / "styles12"
STYLES13 = Path(__file__).parent / "scripts" / "styles13"
STYLES14 = Path(__file__).parent / "scripts" / "styles14"


class Planted(NamedTuple):
    script: str
    code: str
    kind: str
    problem: str
    folder: Path = STYLES

    @property
    def path(self) -> Path:
        return self.folder / f"{self.script}.py"


PLANTED = [
    Planted("s01_default_dtype_float64", "D201", "speed", "set_default_dtype(float64)"),
    Planted("s02_double_lightning_like", "D201", "speed", ".double() on a Lightning-like module"),
    Planted("s03_eval_method_with_grad", "D301", "speed", "validate() method without no_grad"),
    Planted("s04_train_mode_forgotten", "D305", "error", "model.train() forgotten after eval"),
    Planted("s05_gan_generator_eval", "D305", "error", "GAN generator trained in eval mode"),
    Planted("s06_eval_mode_never_called", "D302", "error", "eval() never called (Dropout)"),
    Planted("s07_loader_built_per_epoch", "D103", "speed", "DataLoader(workers) built per epoch"),
    Planted("s08_item_in_metrics_helper", "D401", "info", ".item() per step in a meter class"),
    Planted("s09_checkpoint_helper_every_step", "D701", "speed", "torch.save per step (helper)"),
    Planted("s10_logging_every_step", "D702", "speed", "logging.info every step"),
    Planted("s11_tiny_batch_conv", "D202", "speed", "batch size 2 (conv net)"),
    Planted("s12_collate_python_loop", "D111", "speed", "per-token Python loop in collate_fn"),
    Planted("s13_pin_memory_off_cpu", "D104", "clean", "pin_memory off on a CPU run"),
    Planted("s14_zero_grad_never_called", "D221", "error", "zero_grad never called (closure)"),
    Planted("s15_anomaly_context", "D211", "speed", "detect_anomaly() context left on"),
    Planted("s16_retain_graph_two_losses", "D214", "speed", "retain_graph=True, two backwards"),
    Planted("s17_loss_history_in_trainer", "D503", "speed", "loss tensors kept in self.history"),
    Planted("s18_rl_item_per_env_step", "D401", "info", ".item() per RL environment step"),
    Planted("s19_char_rnn_cell_loop_accum", "D203", "speed", "LSTMCell time loop + accumulation"),
    Planted("s20_heavy_getitem", "D105", "speed", "per-pixel Python work in __getitem__"),
    Planted("s21_next_iter_in_while", "D107", "speed", "next(iter(loader)) every step"),
    Planted("s22_validation_callback_every_step", "D304", "speed", "validation callback per step"),
    Planted("s23_best_model_deepcopy", "D215", "speed", "deepcopy(model) for the best model"),
    Planted("s24_profiler_around_fit", "D212", "speed", "torch.profiler around the fit"),
    Planted("s25_optimizer_foreach_false", "D210", "speed", "AdamW(foreach=False), 50 tensors"),
    Planted("s26_zero_grad_between_backward_and_step", "D222", "error", "zero_grad before step"),
    Planted("s27_adversarial_attack_in_eval_mode", "D305", "clean", "FGSM attack in eval mode"),
]

# round 4: a second set by other hands (argparse mains, dataclass/dict configs, Trainer classes,
# callbacks, a Lightning-like framework, GAN, actor-critic, seq2seq, VAE, contrastive, BYOL, bf16
# autocast, accumulation, schedulers, early stopping); each plants one problem
PLANTED2 = [
    Planted(*row, folder=STYLES2)
    for row in [
        ("t01_argparse_cnn_float64", "D201", "speed", "--dtype float64 default (CNN)"),
        ("t02_dataclass_config_item_every_step", "D401", "info", "loss.item() per step"),
        ("t03_lightning_like_validation_step_grad", "D301", "speed", "framework val w/o no_grad"),
        ("t04_gan_discriminator_grads_never_cleared", "D221", "error", "opt_d.zero_grad missing"),
        ("t05_actor_critic_inline_env_anomaly", "D211", "speed", "set_detect_anomaly(True)"),
        ("t06_seq2seq_teacher_forcing_loss_list", "D503", "speed", "losses kept with graphs"),
        ("t07_vae_config_dict_eval_every_step", "D304", "speed", "held-out ELBO every step"),
        ("t08_contrastive_optimizer_per_tensor", "D210", "speed", "SGD(foreach=False), 38 tensors"),
        # printed to a pipe the lines cost under 2% of the step (D702 silent, as measured);
        # the tensors' host reads are reported with their line
        ("t09_bf16_autocast_print_tensors", "D401", "info", "print of tensors every step"),
        ("t10_grad_accum_checkpoint_every_micro_batch", "D701", "speed", "torch.save per step"),
        ("t11_scheduler_early_stopping_train_false", "D305", "error", "train(False), never back"),
        ("t12_generator_stream_batch_of_two", "D202", "speed", "batch size 2 from a generator"),
        ("t13_augmenting_dataset_python_pixels", "D105", "speed", "per-pixel loops in getitem"),
        ("t14_padding_collate_python_loop", "D111", "speed", "padding token by token in collate"),
        ("t15_tensordataset_default_loader", "D108", "speed", "TensorDataset + DataLoader"),
        ("t16_attention_python_position_loop", "D203", "speed", "attention loop over positions"),
        ("t17_byol_target_deepcopy_every_step", "D215", "speed", "deepcopy(online) every step"),
        ("t18_frozen_backbone_wrapper_eval", "D305", "error", "self.eval() in __init__"),
        ("t19_legacy_autograd_profiler", "D212", "speed", "autograd.profiler.profile() on"),
        ("t20_numpy_rows_to_tensor_in_loop", "D106", "speed", "torch.tensor(list of arrays)"),
        ("t21_accumulation_never_zeroed", "D221", "error", "accumulation, zero_grad forgotten"),
        ("t22_epoch_end_callback_eval_in_train_mode", "D302", "error", "val callback, no eval()"),
        ("t23_logits_kept_for_epoch_metrics", "D503", "speed", "logits kept with graphs"),
        ("t24_sklearn_style_metrics_cpu_numpy", "D401", "info", ".cpu().numpy() per step"),
        ("t25_manual_grad_none_clean", "D221", "clean", "p.grad = None by hand, no zero_grad"),
        ("t26_recsys_zero_grad_fill_zeros", "D220", "speed", "zero_grad(set_to_none=False)"),
        ("t27_mixer_checkpoint_sequential", "D213", "speed", "checkpoint_sequential on CPU"),
        ("t28_clean_best_checkpoint_per_epoch", "D701", "clean", "best model saved per epoch"),
    ]
]

# round 5: a third set, program shapes the first two lack (CLI subcommands, a model zoo, a
# callback registry, forward and gradient hooks, fit() on a Module, an Ignite-like engine, an
# IterableDataset, multi-task, curriculum, distillation, EMA, mixup, label smoothing, weight
# tying, WGAN-GP, TBPTT, a masked LM, a ViT, a graph network, a replay buffer, a DataModule);
# u32 plants two problems (the error is scored, the host read is its second finding)
PLANTED3 = [
    Planted(*row, folder=STYLES3)
    for row in [
        ("u01_cli_subcommands_double", "D201", "speed", "train subcommand, float64 default"),
        ("u02_model_zoo_eval_with_autograd", "D301", "speed", "validate() without no_grad"),
        ("u03_callbacks_registry_checkpoint", "D701", "speed", "checkpoint callback per step"),
        ("u04_forward_hooks_log_item", "D401", "info", ".item() in forward hooks"),
        ("u05_module_fit_method_eval_train_mode", "D302", "error", "evaluate() w/o eval()"),
        ("u06_engine_events_eval_every_iteration", "D304", "speed", "evaluator per iteration"),
        ("u07_iterable_dataset_tokenize_in_iter", "D101", "speed", "tokenizing in __iter__"),
        ("u08_multitask_loss_dict_history", "D503", "speed", "task losses kept with graphs"),
        ("u09_curriculum_next_iter_every_step", "D107", "speed", "next(iter(loader)) per step"),
        ("u10_distillation_two_backwards", "D214", "speed", "KD and CE backward separately"),
        ("u11_clean_ema_foreach_lerp", "D215", "clean", "EMA copied once, lerp in place"),
        ("u12_mixup_per_sample_loop", "D203", "speed", "mixup blended sample by sample"),
        ("u13_clean_label_smoothing_item_every_100", "D401", "clean", ".item() per 100 steps"),
        ("u14_weight_tying_grads_never_cleared", "D221", "error", "model.zero_grad not called"),
        ("u15_clean_wgan_gp_double_backward", "D214", "clean", "gradient penalty, create_graph"),
        ("u16_wgan_gp_anomaly_from_config", "D211", "speed", "set_detect_anomaly from config"),
        ("u17_tbptt_epoch_loss_keeps_graphs", "D503", "speed", "epoch_loss = epoch_loss + loss"),
        ("u18_masked_lm_item_token_count", "D401", "info", "mask.sum().item() per step"),
        ("u19_vit_generated_images_profiler_started", "D212", "speed", "prof.start(), no stop"),
        ("u20_gnn_message_passing_edge_loop", "D203", "speed", "aggregation edge by edge"),
        ("u21_csv_metrics_fsync_every_step", "D801", "speed", "CSV row + fsync per step"),
        ("u22_module_zero_grad_keep_buffers", "D220", "speed", "model.zero_grad(False)"),
        ("u23_rollback_snapshot_every_step", "D215", "speed", "state_dict deepcopy per step"),
        ("u24_optimizer_per_parameter", "D210", "speed", "one Adam per parameter tensor"),
        ("u25_fit_method_custom_dataset_in_memory", "D108", "speed", "row Dataset, batch 256"),
        ("u26_student_copied_from_eval_teacher", "D305", "error", "deepcopy of eval() teacher"),
        ("u27_replay_buffer_batch_of_four", "D202", "speed", "replay minibatch of 4"),
        ("u28_clean_persistent_workers_map_dataset", "D103", "clean", "persistent worker"),
        ("u29_clean_tbptt_gru_detached", "D503", "clean", "TBPTT with detach"),
        ("u30_clean_callbacks_trainer_epoch_checkpoint", "D701", "clean", "save per epoch"),
        ("u31_clean_inference_mode_eval_every_epoch_double_grad", "D214", "clean", "PINN grad"),
        ("u32_gru_classifier_val_train_mode_item", "D302", "error", "val in train mode + item"),
        ("u33_datamodule_loader_per_epoch", "D103", "speed", "DataModule loader per epoch"),
        ("u34_grad_hooks_norm_item", "D401", "info", ".item() in gradient hooks"),
    ]
]

# round 6: a fourth set (an HF-style dataclass output and Trainer with callbacks, an
# Accelerate-like wrapper, a Lightning-like fit loop, seq2seq, char-RNN TBPTT, VAE with KL
# annealing, diffusion, WGAN with n_critic, DQN, PPO, contrastive views, embedding bags, sliding
# windows, multi-label BCE, torch.compile, accumulation, bf16 autocast, clipping, warmup, early
# stopping, checkpoints every N steps); problems sit in helpers, callbacks, methods, datasets
PLANTED4 = [
    Planted(*row, folder=STYLES4)
    for row in [
        ("v01_hf_output_trainer_callback_eval_with_grad", "D301", "speed", "eval callback, grad"),
        ("v02_accelerate_like_backward_anomaly_debug", "D211", "speed", "wrapper debug default"),
        ("v03_lightning_fit_loop_validation_without_eval", "D302", "error", "val, Dropout on"),
        ("v04_seq2seq_greedy_decode_eval_with_grad", "D301", "speed", "greedy decode, grad on"),
        ("v05_char_rnn_tbptt_checkpoint_every_chunk", "D701", "speed", "--save-every 1"),
        ("v06_vae_kl_annealing_numpy_float64", "D201", "speed", "model.to(numpy float64)"),
        ("v07_diffusion_noise_prediction_loss_history", "D503", "speed", "loss tensors kept"),
        ("v08_gan_n_critic_critic_grads_never_cleared", "D221", "error", "g_opt cleared twice"),
        ("v09_dqn_target_net_deepcopy_every_step", "D215", "speed", "deepcopy target per step"),
        ("v10_ppo_minibatch_of_two", "D202", "speed", "256 // 128 minibatches"),
        ("v11_contrastive_knn_monitor_leaves_eval", "D305", "error", "kNN monitor leaves eval"),
        (
            "v12_embedding_bag_recsys_adagrad_foreach_false",
            "D210",
            "speed",
            "Adagrad(foreach=False)",
        ),
        ("v13_sliding_window_getitem_python_loop", "D101", "speed", "window z-norm in Python"),
        ("v14_multilabel_bce_collate_numpy_rows", "D106", "speed", "torch.tensor(list of arrays)"),
        ("v15_compiled_model_eval_without_eval_mode", "D302", "error", "compiled, val w/o eval()"),
        ("v16_grad_accum_zero_grad_before_step", "D222", "error", "helper clears, then steps"),
        ("v17_bf16_autocast_validation_every_log_interval", "D304", "speed", "val every step"),
        ("v18_manual_clip_per_parameter_norm_item", "D401", "info", "norm().item() per tensor"),
        (
            "v19_warmup_scheduler_checkpoint_every_n_miscomputed",
            "D701",
            "speed",
            "max(1, 64//1000)",
        ),
        ("v20_early_stopping_checked_every_step", "D304", "speed", "stopper evaluates per step"),
        ("v21_trainer_profiler_callback_never_stopped", "D212", "speed", "on_train_end skipped"),
        ("v22_vae_checkpointed_encoder_blocks", "D213", "speed", "checkpoint() on CPU VAE"),
        ("v23_gan_fake_not_detached_retain_graph", "D214", "speed", "retain_graph, no detach"),
        ("v24_lightning_like_self_log_keeps_tensors", "D503", "speed", "self.log keeps loss"),
        ("v25_text_dataset_tokenize_in_getitem", "D101", "speed", "tokenizing in __getitem__"),
        ("v26_recsys_negative_sampling_collate_loop", "D111", "speed", "negatives drawn in Python"),
        ("v27_forecaster_tensordataset_default_loader", "D108", "speed", "TensorDataset, 512"),
        ("v28_dqn_replay_loader_next_iter", "D107", "speed", "next(iter(DataLoader)) per update"),
        (
            "v29_accelerate_like_zero_grad_keeps_buffers",
            "D220",
            "speed",
            "wrapper set_to_none=False",
        ),
        ("v30_argparse_float64_and_eval_every_step", "D201", "speed", "float64 + eval per step"),
        ("v31_char_transformer_mask_built_in_python", "D801", "speed", "mask by nested loop"),
        ("v32_callback_builds_worker_loader_each_epoch", "D103", "speed", "loader per epoch (cb)"),
        ("v33_gan_sample_grid_leaves_generator_eval", "D305", "error", "sample grid leaves eval"),
        ("v34_multilabel_metrics_numpy_every_step", "D401", "info", ".cpu().numpy() per step"),
        ("v35_per_sample_loss_weights_python_loop", "D801", "speed", "float() per sample"),
        ("w01_clean_hf_trainer_callbacks_eval_per_epoch", "D301", "clean", "HF-style, all right"),
        ("w02_clean_accelerate_like_bf16_autocast_clip", "D211", "clean", "bf16, clip, warmup"),
        ("w03_clean_lightning_like_fit_val_per_epoch", "D302", "clean", "val per epoch, eval()"),
        ("w04_clean_dqn_target_sync_every_500", "D215", "clean", "load_state_dict per 500"),
        ("w05_clean_ppo_minibatch_64", "D202", "clean", "minibatches of 64"),
        ("w06_clean_vae_kl_annealing_warmup_cosine", "D201", "clean", "float32 from NumPy"),
        ("w07_clean_wgan_n_critic_detached", "D221", "clean", "each optimizer cleared"),
        ("w08_clean_checkpoint_every_200_steps_accumulation", "D701", "clean", "save per 200"),
        ("w09_clean_embedding_bag_recsys_sparse_adam", "D210", "clean", "SparseAdam + Adam"),
    ]
]

# round 7: a fifth set (argparse and nested-config mains, model registries and factories, a
# training loop in a generator, a coroutine meter, callback lists and step hooks, hand-written
# loss scaling with bf16, multi-task heads, curriculum pools, WeightedRandomSampler, a CSV
# IterableDataset, memory-mapped NumPy, sparse embeddings, a GCN with index_add_, waveforms,
# tabular embeddings, distillation, EMA and SWA, Mixture-of-Experts, sequence packing, beam
# search, MAML, actor-critic with GAE, a normalizing flow, a U-Net, a siamese net, word2vec,
# MoCo, a time-series transformer); problems sit in helpers, hooks, methods, datasets, collates
PLANTED5 = [
    Planted(*row, folder=STYLES5)
    for row in [
        ("x01_registry_factory_dtype_from_config", "D201", "speed", "--dtype float64 default"),
        ("x02_nested_config_val_check_interval_one", "D304", "speed", "val_check_interval 1"),
        ("x03_module_registry_evaluate_dropout_on", "D302", "error", "evaluate() w/o eval()"),
        ("x04_generator_loop_yields_loss_tensor", "D503", "speed", "yielded loss kept"),
        ("x05_coroutine_meter_reads_every_value", "D401", "info", "float() in a coroutine"),
        ("x06_callback_list_checkpoint_on_batch_end", "D701", "speed", "checkpoint per batch"),
        ("x07_manual_loss_scaling_bf16_inf_check_per_param", "D401", "info", "isfinite per param"),
        ("x08_multitask_heads_backward_in_dict_loop", "D214", "speed", "backward per task"),
        ("x09_curriculum_sampler_new_worker_loader_per_stage", "D103", "speed", "loader per epoch"),
        ("x10_weighted_sampler_tensordataset_default_loader", "D108", "speed", "TensorDataset"),
        ("x11_iterable_csv_stream_parsed_in_iter", "D101", "speed", "CSV parsed in __iter__"),
        ("x12_memmap_rows_list_to_tensor", "D106", "speed", "torch.tensor(memmap rows)"),
        ("x13_sparse_embedding_dense_opt_fills_zeros", "D220", "speed", "set_to_none=False"),
        ("x14_gnn_degree_norm_python_node_loop", "D203", "speed", "degree per node in Python"),
        ("x15_waveform_getitem_frame_loop", "D105", "speed", "frame loop in __getitem__"),
        ("x16_tabular_embeddings_batch_from_config_four", "D202", "speed", "batch_size 4"),
        ("x17_distillation_teacher_zero_grad_by_mistake", "D221", "error", "teacher.zero_grad()"),
        ("x18_ema_debug_flag_anomaly_default_on", "D211", "speed", "debug=True default"),
        ("x19_swa_averaged_model_eval_in_train_mode", "D302", "error", "SWA model in train()"),
        ("x20_moe_routing_per_token_loop", "D203", "speed", "expert call per token"),
        ("x21_sequence_packing_collate_token_loop", "D111", "speed", "packing token by token"),
        ("x22_beam_search_eval_with_autograd", "D301", "speed", "beam search, grad on"),
        ("x23_maml_meta_opt_never_cleared", "D221", "error", "meta_opt.zero_grad missing"),
        ("x24_actor_critic_gae_numpy_env_double", "D201", "speed", "agent.double()"),
        ("x25_flow_nll_monitor_every_step", "D304", "speed", "held-out NLL every step"),
        ("x26_unet_running_dice_keeps_graph", "D503", "speed", "running_dice += dice"),
        ("x27_siamese_pair_search_in_getitem", "D105", "speed", "label scan per sample"),
        # a FileHandler record per step measured at under 1% of the LSTM's step: D702 silent
        ("x28_char_lm_logging_handler_every_step", "D702", "clean", "log record per step"),
        ("x29_cgan_trainer_methods_fake_not_detached", "D214", "speed", "retain_graph, no detach"),
        ("x30_word2vec_negatives_collate_python", "D111", "speed", "negatives per pair"),
        ("x31_dqn_replay_list_of_arrays_to_tensor", "D106", "speed", "torch.tensor(list)"),
        ("x32_moco_param_groups_foreach_false", "D210", "speed", "SGD foreach=False"),
        ("x33_scheduler_hook_clears_before_step", "D222", "error", "hook clears before step"),
        ("x34_autoencoder_hook_saves_reconstructions", "D701", "speed", "torch.save per step"),
        ("x35_infinite_loader_class_reiterates", "D107", "speed", "iter(loader) per batch"),
        ("y01_clean_argparse_registry_eval_per_epoch", "D301", "clean", "eval per epoch"),
        ("y02_clean_generator_loop_detached_metrics", "D503", "clean", "detached metrics"),
        ("y03_clean_gan_fake_detached_no_retain", "D214", "clean", "fake.detach()"),
        ("y04_clean_maml_create_graph", "D221", "clean", "meta_opt cleared"),
        ("y05_clean_actor_critic_shared_trunk_one_backward", "D214", "clean", "one backward"),
        ("y06_clean_unet_ema_foreach_lerp", "D215", "clean", "EMA by lerp"),
        ("y07_clean_collate_vectorized_negatives", "D111", "clean", "whole-batch collate"),
        ("y08_clean_moe_dispatch_by_expert", "D203", "clean", "dispatch by expert"),
        ("y09_clean_iterable_npy_shards_workers", "D101", "clean", "shards, 2 workers"),
    ]
]

# round 8: a sixth set (a research train.py with argparse and a utils block, Keras-like
# compile/fit wrappers, torch.func functional training, notebook cells with globals, a
# detection-reference-style engine, hooks registered by decorators, Trainer subclasses
# overriding steps, loops only under `if __name__ == "__main__":`, multi-stage pipelines,
# no_sync-like accumulation contexts, home-made logger/profiler libraries, state machines over
# epochs; time-series windows, point clouds, two-tower and FM recommenders, speech CTC, bucketed
# text, VAE annealing, SimSiam/SimCLR/siamese pairs, diffusion, GCN link prediction, multi-label
# tagging, CRNN OCR, a NumPy replay buffer); a32 plants two problems (the error is scored)
PLANTED6 = [
    Planted(*row, folder=STYLES6)
    for row in [
        ("a01_research_argparse_forecast_print_predictions", "D702", "speed", "print(tensor)"),
        ("a02_keras_fit_wrapper_bucketed_text_zero_grad_fill", "D220", "speed", "fill zeros"),
        ("a03_functional_torch_func_pointnet_float64", "D201", "speed", "torch.func, float64"),
        ("a04_notebook_globals_vae_annealing_checkpointed", "D213", "speed", "checkpoint()"),
        ("a05_engine_crnn_ocr_evaluate_with_grad", "D301", "speed", "no_grad commented out"),
        ("a06_decorator_hooks_two_tower_clear_before_step", "D222", "error", "hook clears"),
        ("a07_trainer_subclass_ctc_validation_dropout_on", "D302", "error", "override, no eval"),
        ("a08_main_guard_gnn_link_prediction_python_negatives", "D801", "speed", "negatives"),
        ("a09_pretrain_finetune_pairs_tiny_worker_batches", "D112", "info", "stage 2 batch 4"),
        ("a10_no_sync_accumulation_diffusion_two_backwards", "D214", "speed", "two backwards"),
        ("a11_own_logger_library_multilabel_keeps_losses", "D503", "speed", "run.log(loss)"),
        ("a12_epoch_state_machine_replay_eval_every_step", "D304", "speed", "EVAL per update"),
        ("a13_research_argparse_bucketed_text_collate_padding_loop", "D111", "speed", "padding"),
        ("a14_keras_fit_tabular_tensordataset_worker", "D109", "speed", "TensorDataset, 2 wk"),
        ("a15_closures_vae_grads_never_cleared", "D221", "error", "zero_grad at build time"),
        ("a16_notebook_diffusion_samples_history_cat", "D504", "speed", "torch.cat history"),
        ("a17_engine_pointcloud_getitem_farthest_point_sampling", "D105", "speed", "FPS loop"),
        ("a18_decorator_hooks_multilabel_checkpoint_every_step", "D701", "speed", "save hook"),
        ("a19_trainer_subclass_siamese_pairs_left_in_eval", "D305", "error", "hook leaves eval"),
        ("a20_main_guard_crnn_batch_of_two", "D202", "speed", "BATCH = 2"),
        ("a21_pipeline_mlm_pretrain_layerwise_groups_foreach_false", "D210", "speed", "per tensor"),
        ("a22_accumulation_ctx_recsys_zero_grad_condition_never_true", "D221", "error", "% =="),
        ("a23_own_metrics_lib_profiler_by_default", "D212", "speed", "profile=True default"),
        ("a24_phase_state_machine_gan_debug_anomaly_never_off", "D211", "speed", "debug phase"),
        ("a25_research_utils_ctc_sample_batch_next_iter", "D107", "speed", "sample_batch()"),
        ("a26_keras_fit_validation_freq_in_batches", "D304", "speed", "validation_freq=1"),
        ("a27_trainer_subclass_mean_teacher_deepcopy_every_step", "D215", "speed", "deepcopy"),
        ("a28_notebook_numpy_float64_model_double", "D201", "speed", "model.double()"),
        ("a29_functional_closures_multilabel_row_dataset", "D108", "speed", "rows, batch 256"),
        ("a30_engine_diffusion_ema_deepcopy", "D215", "speed", "EMA rebuilt by deepcopy"),
        ("a31_pipeline_stages_ocr_loader_rebuilt_each_epoch", "D103", "speed", "loader/epoch"),
        ("a32_main_guard_simclr_eval_mode_and_item", "D305", "error", "eval() + .item()"),
        ("b01_clean_research_argparse_forecaster", "D301", "clean", "val per epoch"),
        ("b02_clean_keras_fit_text_bucketing", "D220", "clean", "zero_grad(), SGD"),
        ("b03_clean_functional_call_grad_regression", "D201", "clean", "torch.func, float32"),
        ("b04_clean_notebook_vae_annealing", "D213", "clean", "no checkpointing"),
        ("b05_clean_engine_crnn_ocr", "D301", "clean", "inference_mode per epoch"),
        ("b06_clean_decorator_hooks_checkpoint_per_epoch", "D701", "clean", "save per epoch"),
        ("b07_clean_trainer_subclass_siamese", "D302", "clean", "eval() and back"),
        ("b08_clean_no_sync_accumulation_denoiser", "D214", "clean", "one backward"),
        ("b09_clean_state_machine_replay_agent", "D304", "clean", "eval per 1000"),
    ]
]

# round 9: a seventh set (generator pipelines, an Experiment class with dataclass configs and
# callbacks, model.training_step(), closures given to run_epoch(), while loops over next() with
# StopIteration, one function for every phase with a `mode` argument, own progress bars,
# curriculum, multi-task, WGAN n_critic, seq2seq teacher forcing, distillation, two-stage
# pipelines, early stopping, LR finders, k-fold CV, sys.argv mains; tabular, graph, audio-like,
# attention, RNN and recommender models)
PLANTED7 = [
    Planted(*row, folder=STYLES7)
    for row in [
        ("c01_generator_pipeline_tabular_tensor_from_arrays", "D106", "speed", "tensor(rows)"),
        ("c02_experiment_dataclass_callbacks_print_every_batch", "D702", "speed", "every=1"),
        ("c03_model_training_step_attention_step_before_backward", "D222", "error", "step 1st"),
        ("c04_run_epoch_closures_graph_python_neighbour_loop", "D801", "speed", "per node"),
        ("c05_while_global_step_next_iter_rebuilt_rnn", "D107", "speed", "iter() in while"),
        ("c06_mode_argument_phase_validation_keeps_grad", "D301", "speed", "mode != test"),
        ("c07_own_progress_bar_metrics_dict_keeps_graph", "D503", "speed", "+= loss"),
        ("c08_curriculum_subsets_per_epoch_sample_fetch", "D108", "speed", "Subset, 512"),
        ("c09_multitask_heads_checkpointed_trunk", "D213", "speed", "checkpoint(block)"),
        ("c10_wgan_n_critic_critic_grads_never_cleared", "D221", "error", "opt_g.zero_grad"),
        ("c11_seq2seq_teacher_forcing_cell_loop", "D203", "speed", "GRUCell per position"),
        ("c12_distillation_teacher_in_double", "D201", "speed", "teacher.double()"),
        ("c13_autoencoder_then_classifier_stage_two_never_cleared", "D221", "error", "stage 2"),
        ("c14_early_stopping_patience_validation_every_batch", "D304", "speed", "interval 1"),
        ("c15_lr_finder_then_train_predictions_concatenated", "D504", "speed", "torch.cat"),
        ("c16_kfold_cv_workers_respawned_each_epoch", "D103", "speed", "not persistent"),
        ("c17_sys_argv_main_audio_getitem_frames_loop", "D105", "speed", "framing loop"),
        ("c18_generator_dataset_tiny_batches_through_workers", "D112", "info", "batch 4, 2 wk"),
        ("c19_experiment_callbacks_profiler_callback_on", "D212", "speed", "profile=True"),
        ("c20_while_stopiteration_recsys_tensordataset_workers", "D109", "speed", "4 workers"),
        ("c21_closures_run_epoch_char_rnn_optimizer_per_tensor", "D210", "speed", "foreach=False"),
        ("c22_mode_argument_train_flag_validation_in_train_mode", "D302", "error", "dropout on"),
        ("c23_own_progress_bar_postfix_item_every_step", "D401", "info", "postfix .item()"),
        ("c24_curriculum_lengths_collate_pads_per_token", "D111", "speed", "per-token pad"),
        ("c25_multitask_config_debug_anomaly_left_on", "D211", "speed", "debug=True"),
        ("c26_reinforce_policy_evaluated_after_every_update", "D304", "speed", "EVAL_EVERY=1"),
        ("c27_gan_samples_grid_generator_left_in_eval", "D305", "error", "eval() not undone"),
        ("c28_distillation_student_ema_deepcopy_every_step", "D215", "speed", "deepcopy EMA"),
        ("c29_kfold_best_fold_checkpoint_every_batch", "D701", "speed", "save per batch"),
        ("c30_lr_finder_then_train_zero_grad_keeps_tensors", "D220", "speed", "set_to_none=False"),
        ("c31_gcn_two_tasks_retain_graph_two_backwards", "D214", "speed", "retain_graph"),
        ("c32_sys_argv_main_embedding_bag_batch_of_two", "D202", "speed", "-b default 2"),
        ("d01_clean_generator_pipeline_tabular", "D106", "clean", "from_numpy"),
        ("d02_clean_experiment_callbacks_checkpoint_per_epoch", "D701", "clean", "per epoch"),
        ("d03_clean_model_training_step_attention", "D222", "clean", "backward, step"),
        ("d04_clean_while_global_step_stopiteration_gru", "D107", "clean", "iter once"),
        ("d05_clean_mode_argument_train_val_test", "D301", "clean", "mode == train"),
        ("d06_clean_wgan_n_critic", "D221", "clean", "own zero_grad"),
        ("d07_clean_seq2seq_teacher_forcing_full_sequence", "D203", "clean", "nn.GRU"),
        ("d08_clean_kfold_cv_persistent_workers", "D701", "clean", "save per epoch"),
        ("d09_clean_lr_finder_early_stopping", "D304", "clean", "val per epoch"),
    ]
]

PLANTED8 = [
    Planted(*row, folder=STYLES8)
    for row in [
        ("e01_keras_like_fit_zero_grad_fills_zeros", "D220", "speed", "set_to_none=False"),
        ("e02_ignite_like_engine_logger_handler_every_iteration", "D702", "speed", "every=1"),
        ("e03_no_sync_accumulation_zero_grad_before_step", "D222", "error", "zero_grad, step"),
        ("e04_hydra_config_tensordataset_workers", "D109", "speed", "num_workers: 4"),
        ("e05_two_files_sibling_utils_getitem_spectrogram", "D105", "speed", "sibling getitem"),
        ("e06_random_split_subset_per_sample_fetch", "D108", "speed", "Subset, 1024"),
        ("e07_weighted_sampler_augmenting_dataset_main_process", "D101", "speed", "workers 0"),
        ("e08_packed_text_classifier_collate_tensor_from_arrays", "D106", "speed", "tensor(rows)"),
        ("e09_char_rnn_hidden_carried_without_detach", "D504", "speed", "no detach"),
        ("e10_vae_kl_annealing_checkpointed_encoder", "D213", "speed", "checkpoint(enc)"),
        ("e11_contrastive_two_views_tiny_batches_workers", "D112", "info", "batch 8, 2 wk"),
        ("e12_unet_denoiser_noise_schedule_per_sample_loop", "D801", "speed", "math.prod loop"),
        ("e13_actor_critic_rollout_buffer_tensor_from_arrays", "D106", "speed", "tensor(obs)"),
        ("e14_gan_gradient_penalty_generator_zero_grad_after_backward", "D222", "error", "G"),
        ("e15_bf16_autocast_cpu_validation_keeps_graph", "D301", "speed", "no no_grad"),
        ("e16_mixup_label_smoothing_partner_batch_new_iterator", "D107", "speed", "next(iter)"),
        ("e17_swa_averaged_model_rebuilt_every_step", "D215", "speed", "AveragedModel/step"),
        ("e18_mean_teacher_ema_model_zero_grad_keeps_buffers", "D220", "speed", "module zero"),
        ("e19_onecycle_per_batch_val_every_rounds_to_one", "D304", "speed", "len // 100"),
        ("e20_collate_random_crop_flip_per_sample_python", "D111", "speed", "pixel rows"),
        ("e21_bytesio_npy_records_loaded_in_main_process", "D101", "speed", "np.load, 0 wk"),
        ("e22_csv_metrics_row_flushed_every_step", "D702", "speed", "csv + fsync"),
        ("e23_dqn_target_network_copied_every_step", "D215", "speed", "deepcopy target"),
        ("e24_recsys_huge_item_table_adam_state", "D502", "info", "dense Adam"),
        ("e25_tiny_gpt_checkpoint_every_block", "D213", "speed", "checkpoint(block)"),
        ("e26_bilstm_crf_forward_algorithm_time_loop", "D203", "speed", "per tag"),
        ("e27_tabular_fit_per_epoch_loader_rebuilt_workers", "D103", "speed", "per epoch"),
        ("e28_forecasting_windows_tensordataset_persistent_workers", "D109", "speed", "3 wk"),
        ("e29_siamese_pairs_batch_of_four_workers", "D112", "info", "batch 4, 2 wk"),
        ("e30_point_cloud_debug_wrapper_detect_anomaly", "D211", "speed", "run_safely"),
        ("e31_recsys_negative_sampling_seen_items_concatenated", "D504", "speed", "isin(seen)"),
        ("e32_streaming_auc_over_all_scores_so_far", "D504", "speed", "AUC of all"),
        ("e33_prototypical_episodes_optimizer_zero_grad_wrong_object", "D221", "error", "temp_opt"),
        ("e34_timing_context_profiler_schedule_never_ends", "D212", "speed", "active=10000"),
        ("f01_clean_keras_like_fit_callbacks", "D701", "clean", "save per epoch"),
        ("f02_clean_ignite_like_engine_periodic_handlers", "D702", "clean", "every=100"),
        ("f03_clean_no_sync_accumulation_step_then_zero", "D222", "clean", "step, zero"),
        ("f04_clean_char_rnn_truncated_bptt_detached", "D504", "clean", "detach"),
        ("f05_clean_mixup_cutmix_in_batch_partner", "D107", "clean", "randperm partner"),
        ("f06_clean_ppo_rollout_buffer_minibatch_epochs", "D106", "clean", "np arrays"),
        ("f07_clean_beta_vae_cyclical_annealing", "D213", "clean", "no checkpoint"),
        ("f08_clean_csv_logger_buffered_rows", "D702", "clean", "every 200"),
        ("f09_clean_ddpm_unet_cumprod_table", "D801", "clean", "table"),
    ]
]

PLANTED9 = [
    Planted(*row, folder=STYLES9)
    for row in [
        ("f01_trainer_hooks_on_batch_end_checkpoint", "D701", "speed", "every=batch"),
        ("f02_torch_func_functional_call_params_in_float64", "D201", "speed", ".double() dict"),
        ("f03_tabular_csv_rows_fetched_one_at_a_time", "D108", "speed", "row Dataset, 512"),
        ("f04_hand_tokenizer_bucketing_collate_pads_per_token", "D111", "speed", "pad per token"),
        ("f05_multitask_heads_backward_per_task_retain_graph", "D214", "speed", "3 backwards"),
        ("f06_triplet_hard_mining_item_per_anchor", "D401", "info", ".item() per anchor"),
        ("f07_seq2seq_teacher_forcing_decoder_cell_per_step", "D203", "speed", "cell per position"),
        ("f08_config_dataclass_registry_optimizer_foreach_off", "D210", "speed", "foreach=False"),
        ("f09_iterable_dataset_stream_synthesised_in_main_process", "D101", "speed", "workers 0"),
        ("f10_global_step_forever_loader_tiny_batches_workers", "D112", "info", "batch 4, 2 wk"),
        ("f11_step_hooks_registry_validation_hooked_on_step", "D304", "speed", "on step_end"),
        ("f12_early_stopping_validation_left_in_train_mode", "D302", "error", "no eval()"),
        ("f13_accumulation_zero_grad_once_per_epoch", "D221", "error", "zero_grad per epoch"),
        ("f14_custom_autograd_function_backward_row_loop", "D203", "speed", "backward per row"),
        ("f15_metric_logger_keeps_loss_tensors_in_records", "D503", "speed", "record loss"),
        ("f16_memory_bank_negatives_grows_every_step", "D504", "speed", "cat bank"),
        ("f17_dataclass_config_per_device_batch_of_two_accumulated", "D202", "speed", "2 x 32"),
        ("f18_siamese_pairs_tensor_from_list_of_arrays", "D106", "speed", "tensor(rows)"),
        ("f19_checkpoint_sequential_small_mlp", "D213", "speed", "checkpoint_sequential"),
        ("f20_debug_flag_defaults_on_anomaly_detection", "D211", "speed", "--debug default"),
        ("f21_profiler_started_by_hand_never_stopped_until_end", "D212", "speed", "no schedule"),
        ("f22_trainer_loader_property_rebuilt_each_epoch", "D103", "speed", "property loader"),
        ("f23_multitask_round_robin_new_iterator_per_task_batch", "D107", "speed", "next(iter)"),
        ("f24_eval_every_n_steps_inside_epoch_keeps_graph", "D301", "speed", "no no_grad"),
        ("f25_freeze_bn_helper_puts_whole_model_in_eval", "D305", "error", "model.eval()"),
        ("f26_logger_info_tensor_repr_every_step", "D702", "speed", "info every step"),
        ("f27_iterable_dataset_shards_in_memory_tensors_workers", "D109", "speed", "2 wk, shards"),
        ("f28_workers_from_cpu_count_augmenting_dataset", "D110", "speed", "cpu_count()"),
        ("f29_smoothed_loss_tensor_chains_every_graph", "D503", "speed", "smooth += loss"),
        ("f30_running_accuracy_list_converted_every_step", "D504", "speed", "tensor(all_preds)"),
        ("f31_after_backward_hook_clears_gradients", "D222", "error", "hook zero_grad"),
        ("g01_clean_trainer_callbacks_checkpoint_and_early_stop", "D701", "clean", "per epoch"),
        ("g02_clean_torch_func_vmapped_ensemble", "D210", "clean", "vmap ensemble"),
        ("g03_clean_tabular_csv_batch_sampler_fetch", "D108", "clean", "BatchSampler"),
        ("g04_clean_seq2seq_teacher_forcing_full_sequence", "D203", "clean", "nn.GRU"),
        ("g05_clean_moco_ring_buffer_queue", "D504", "clean", "ring buffer"),
        ("g06_clean_iterable_text_stream_one_worker_big_batches", "D112", "clean", "1 wk, 128"),
        ("g07_clean_accumulation_scheduler_clip_zero_after_step", "D221", "clean", "zero after"),
        ("g08_clean_triplet_batch_hard_detached_metrics", "D401", "clean", "detached sums"),
    ]
]

# round 12: a tenth set in styles no earlier set used (asyncio coroutines, a fastai-like Learner,
# a skorch-like estimator, an Optuna-like sweep, Fabric-/HF-Trainer-/Keras-/Catalyst-like APIs, an
# iterator-protocol trainer, a Hydra-like config, an nbconvert notebook, ensembles, Transformer-XL
# memory, QAT, a PINN, Reptile, FedAvg, a click-like CLI, a resumed run, a Tree-RNN ...)
PLANTED10 = [
    Planted(*row, folder=STYLES10)
    for row in [
        ("h01_asyncio_trainer_evaluate_coroutine_keeps_graph", "D301", "speed", "no no_grad"),
        ("h02_fastai_like_learner_checkpoint_callback_small_cnn", "D213", "speed", "callback"),
        ("h03_skorch_like_estimator_fit_numpy_rows_per_sample", "D108", "speed", "row, 512"),
        ("h04_optuna_like_sweep_batch_size_search_space_tiny", "D202", "speed", "batch 2-4"),
        ("h05_fabric_like_wrapper_precision_64_true", "D201", "speed", '"64-true"'),
        ("h06_hf_trainer_compute_loss_override_aux_backward", "D214", "speed", "aux.backward"),
        ("h07_keras_like_model_checkpoint_save_freq_in_batches", "D701", "speed", "save_freq=1"),
        ("h08_iterator_protocol_trainer_outputs_keep_graph", "D503", "speed", "kept outputs"),
        ("h09_hydra_like_nested_config_profiler_enabled", "D212", "speed", "enabled: true"),
        ("h10_nbconvert_notebook_get_batch_helper_new_iterator", "D107", "speed", "get_batch()"),
        ("h11_seed_ensemble_evaluated_after_every_step", "D304", "speed", "track_every=1"),
        ("h12_transformer_xl_memory_concatenated_never_trimmed", "D504", "speed", "no trim"),
        ("h13_qat_fake_quant_observer_reads_range_every_step", "D401", "info", ".item() x8"),
        ("h14_pinn_collocation_points_drawn_in_python", "D801", "speed", "list of floats"),
        ("h15_reptile_meta_learning_task_model_deepcopied", "D215", "speed", "deepcopy/task"),
        ("h16_fedavg_clients_loaders_workers_respawned_each_round", "D103", "speed", "per round"),
        ("h17_click_like_cli_debug_block_under_dunder_debug", "D211", "speed", "__debug__"),
        ("h18_phase_loop_grad_switch_copied_from_train_test", "D301", "speed", '!= "test"'),
        ("h19_catalyst_like_runner_eval_attribute_not_called", "D302", "error", "model.eval"),
        ("h20_resume_from_checkpoint_helper_leaves_eval_mode", "D305", "error", "eval() on load"),
        ("h21_zero_grad_indented_into_logging_block", "D221", "error", "every 50 steps"),
        ("h22_optimizer_context_manager_clears_before_step", "D222", "error", "zero, step"),
        ("h23_time_based_validation_interval_minutes_vs_seconds", "D304", "speed", "0.5 s"),
        ("h24_fit_generator_legacy_floattensor_from_row_list", "D106", "speed", "FloatTensor"),
        ("h25_compressed_record_shards_decoded_in_main_process", "D101", "speed", "zlib, 0 wk"),
        ("h26_workers_from_scheduler_affinity_heavy_dataset", "D110", "speed", "affinity"),
        ("h27_stack_dataset_dict_samples_through_workers", "D109", "speed", "StackDataset"),
        ("h28_mlm_collator_class_masks_token_by_token", "D111", "speed", "per token"),
        ("h29_gradient_clip_warning_emitted_every_step", "D702", "speed", "warnings.warn"),
        ("h30_lru_cache_on_teacher_targets_keeps_graphs", "D503", "speed", "lru_cache"),
        ("h31_tree_recursive_network_node_by_node", "D203", "speed", "per node"),
        ("h32_nan_guard_decorator_checks_loss_every_step", "D401", "info", "isfinite bool"),
        ("i01_clean_asyncio_trainer_progress_task", "D301", "clean", "no_grad"),
        ("i02_clean_fastai_like_learner_callbacks", "D213", "clean", "callbacks"),
        ("i03_clean_pinn_heat_equation_double_backward", "D214", "clean", "create_graph"),
        ("i04_clean_reptile_task_model_reset_by_load_state_dict", "D215", "clean", "reset"),
        ("i05_clean_fedavg_clients_in_memory_batches", "D103", "clean", "tensors"),
        ("i06_clean_transformer_xl_memory_trimmed_detached", "D504", "clean", "trimmed"),
        ("i07_clean_sklearn_like_estimator_index_slices", "D108", "clean", "slices"),
        ("i08_clean_random_search_sweep_models_in_sequence", "D202", "clean", "batch 128+"),
    ]
]

# round 13: an eleventh set in styles no earlier set used (SAM wrappers, loss plugins, active
# learning, self-training, continual learning with replay, a callback registry, Lookahead, an
# ExitStack of configured contexts over a sparse GCN, a profiling decorator, a checkpoint-all
# helper, DINO, online learning from a stream, packed sequences, argparse subcommands, an LR
# finder, DER, a spawn-guarded main, FixMatch's zipped loaders, molecule strings, a feature
# store, islice, ConcatDataset, BatchSampler with batch_size=None, PyG-like graph batching,
# length bucketing, torch.func training ...)
PLANTED11 = [
    Planted(*row, folder=STYLES11)
    for row in [
        ("k01_sam_optimizer_two_passes_config_dtype_float64", "D201", "speed", 'dtype "float64"'),
        ("k02_spectrogram_autoencoder_loss_plugins_retain_graph", "D214", "speed", "3 backwards"),
        ("k03_active_learning_pool_scored_with_autograd", "D301", "speed", "pool scoring"),
        ("k04_self_training_pseudo_labels_dropout_on", "D302", "error", "no eval()"),
        ("k05_continual_tasks_replay_buffer_eval_leaves_eval_mode", "D305", "error", "train once"),
        ("k06_callback_registry_zero_grad_on_misspelled_event", "D221", "error", "wrong event"),
        ("k07_sam_second_step_after_zero_grad", "D222", "error", "zero, step"),
        ("k08_lookahead_wrapper_inner_radam_foreach_off", "D210", "speed", "foreach=False"),
        ("k09_exit_stack_contexts_from_config_anomaly_sparse_gcn", "D211", "speed", "ExitStack"),
        ("k10_profiled_decorator_on_recommender_main", "D212", "speed", "@profiled"),
        ("k11_memory_saver_wraps_every_child_in_checkpoint", "D213", "speed", "memory_saver"),
        ("k12_dino_teacher_rebuilt_from_student_every_step", "D215", "speed", "deepcopy/step"),
        ("k13_mel_cnn_zero_grad_positional_false", "D220", "speed", "zero_grad(False)"),
        ("k14_online_learning_event_stream_one_at_a_time", "D202", "speed", "batch 1"),
        ("k15_packed_sequences_attention_per_segment_loop", "D203", "speed", "per segment"),
        ("k16_argparse_subcommands_eval_interval_units", "D304", "speed", "every step"),
        ("k17_lr_finder_python_math_on_loss_tensor", "D401", "info", "float(loss)"),
        ("k18_dark_experience_replay_stores_logits_with_graph", "D503", "speed", "logits kept"),
        ("k19_weight_trajectory_tracker_distance_to_every_snapshot", "D504", "speed", "all kept"),
        ("k20_preemption_safe_checkpoint_under_spawn_guard", "D701", "speed", "save/step"),
        ("k21_pprint_metrics_dict_with_tensors_every_step", "D702", "speed", "pprint/step"),
        ("k22_scheduled_sampling_coin_flips_in_python", "D801", "speed", "B*T random()"),
        ("k23_spawn_guarded_main_stft_dataset_no_workers", "D101", "speed", "0 workers"),
        ("k24_fixmatch_zipped_loaders_workers_respawned", "D103", "speed", "2 loaders"),
        ("k25_molecule_graphs_parsed_from_strings_in_getitem", "D105", "speed", "parse/fetch"),
        ("k26_recsys_feature_rows_list_of_arrays_to_tensor", "D106", "speed", "list of arrays"),
        ("k27_islice_on_loader_each_step_fresh_iterator", "D107", "speed", "islice"),
        ("k28_concat_dataset_of_tensor_sources_default_loader", "D108", "speed", "ConcatDataset"),
        ("k29_batch_sampler_slices_through_worker_batch_size_none", "D109", "speed", "2 workers"),
        ("k30_graph_batch_collate_offsets_edges_in_python", "D111", "speed", "per edge"),
        ("k31_bucketing_batch_sampler_divides_batch_by_buckets", "D112", "speed", "batch 2"),
        ("l01_clean_sam_two_passes_float32", "D214", "clean", "two passes"),
        ("l02_clean_der_replay_detached_logits", "D503", "clean", "detached"),
        ("l03_clean_active_learning_inference_mode_scoring", "D301", "clean", "inference_mode"),
        ("l04_clean_functional_grad_manual_sgd", "D221", "clean", "torch.func.grad"),
        ("l05_clean_weight_tied_lm_adamw_param_groups", "D210", "clean", "param groups"),
        ("l06_clean_fixmatch_zipped_persistent_loaders", "D103", "clean", "persistent"),
        ("l07_clean_dino_teacher_foreach_lerp", "D215", "clean", "foreach_lerp_"),
        ("l08_clean_argparse_subcommands_eval_per_epoch", "D304", "clean", "per epoch"),
    ]
]

# round 14: a twelfth set (config dicts and builder registries, callable trainers, itertools-driven
# loops, IterableDataset sharding, collate-time CutMix, fake quantization, mixture of experts,
# MoCo queues, k-fold cross-validation, sweeps in one process, curriculum, early stopping with
# checkpoint-best, two optimizers, Python tokenizers); clean ones with parametrize, vmap
# per-sample gradients, a custom autograd.Function, SparseAdam, AveragedModel EMA, InfoNCE
PLANTED12 = [
    Planted(*row, folder=STYLES12)
    for row in [
        ("m01_yaml_like_config_model_registry_precision_double", "D201", "speed", "double"),
        ("m02_callable_trainer_class_batch_of_two", "D202", "speed", "batch 2"),
        ("m03_fake_quant_per_channel_python_loop", "D203", "speed", "per channel"),
        ("m04_iterable_dataset_sharded_generator_no_workers", "D101", "speed", "0 workers"),
        ("m05_cutmix_collate_patch_loop_in_python", "D111", "speed", "per pixel"),
        ("m06_rolling_window_features_numpy_in_getitem", "D105", "speed", "numpy/fetch"),
        ("m07_curriculum_sampler_rows_to_tensor_from_lists", "D106", "speed", "list rows"),
        ("m08_itertools_count_generator_fresh_iterator", "D107", "speed", "next(iter)"),
        ("m09_kfold_subsets_of_tensor_dataset_default_loader", "D108", "speed", "Subset"),
        ("m10_hyperparameter_sweep_workers_over_tensor_dataset", "D109", "speed", "1 worker"),
        ("m11_config_workers_auto_resolves_to_cpu_count", "D110", "speed", "cpu_count"),
        ("m12_accumulation_micro_batches_of_two_through_worker", "D112", "speed", "micro 2"),
        ("m13_curriculum_rebuilds_loader_over_growing_subset", "D103", "speed", "per epoch"),
        ("m14_encoder_decoder_two_optimizers_foreach_off", "D210", "speed", "foreach=False"),
        ("m15_callable_trainer_debug_flag_anomaly_in_init", "D211", "speed", "debug=True"),
        ("m16_early_stopping_callback_starts_profiler_never_stops", "D212", "speed", "start()"),
        ("m17_checkpoint_sequential_small_model_plenty_memory", "D213", "speed", "sequential"),
        ("m18_mixture_of_experts_backward_per_expert_retain_graph", "D214", "speed", "5 backwards"),
        ("m19_rollback_snapshot_rebuilds_model_every_step", "D215", "speed", "rebuilt/step"),
        ("m20_zero_grad_kwargs_from_config_set_to_none_false", "D220", "speed", "**cfg"),
        ("m21_early_stopping_checkpoint_best_validation_with_autograd", "D301", "speed", "grad"),
        ("m22_sweep_scores_trials_inference_mode_without_eval", "D302", "error", "no eval()"),
        ("m23_evals_per_epoch_interval_rounds_to_every_step", "D304", "speed", "every step"),
        ("m24_sample_generation_leaves_model_in_eval_mode", "D305", "error", "eval() kept"),
        ("m25_two_optimizers_only_decoder_zeroed", "D221", "error", "encoder"),
        ("m26_hard_example_mining_per_sample_losses_tolist", "D401", "info", "tolist()"),
        ("m27_moco_queue_concatenates_keys_with_graph", "D503", "speed", "keys with graph"),
        ("m28_negatives_from_every_batch_ever_seen", "D504", "speed", "bank grows"),
        ("m29_checkpoint_best_on_training_loss_every_improvement", "D701", "speed", "best.pt"),
        ("m30_stdout_write_progress_table_every_step", "D702", "speed", "write/step"),
        ("m31_python_tokenizer_in_training_loop", "D801", "speed", "tokenizer"),
        ("n01_clean_parametrize_symmetric_weights", "D801", "clean", "parametrize"),
        ("n02_clean_vmap_per_sample_gradients_dp_sgd", "D203", "clean", "vmap(grad)"),
        ("n03_clean_custom_autograd_function_straight_through", "D203", "clean", "Function"),
        ("n04_clean_sparse_embeddings_sparse_adam", "D210", "clean", "SparseAdam"),
        ("n05_clean_iterable_dataset_sharded_persistent_worker", "D101", "clean", "1 worker"),
        ("n06_clean_ema_teacher_averaged_model", "D215", "clean", "AveragedModel"),
        ("n07_clean_kfold_cross_validation_sliced_batches", "D108", "clean", "sliced"),
        ("n08_clean_infonce_large_similarity_matrix", "D214", "clean", "one backward"),
    ]
]

PLANTED13 = [
    Planted(*row, folder=STYLES13)
    for row in [
        ("p01_dataclass_config_post_init_builds_model_in_double", "D201", "speed", "float64"),
        ("p02_partial_built_step_function_batch_of_two", "D202", "speed", "batch 2"),
        ("p03_audio_frames_sliced_in_python_loop_in_forward", "D203", "speed", "per frame"),
        ("p04_nested_config_dict_loader_workers_zero_augmenting_dataset", "D101", "speed", "0"),
        ("p05_table_windows_collate_builds_rows_per_timestep", "D111", "speed", "per cell"),
        ("p06_pcm_records_struct_unpacked_in_getitem", "D105", "speed", "struct/sample"),
        ("p07_token_ring_buffer_tensor_from_list_of_arrays", "D106", "speed", "list of arrays"),
        ("p08_generator_yields_batches_fresh_iterator_each_time", "D107", "speed", "next(iter)"),
        ("p09_tabular_embeddings_per_column_tensordataset_default_loader", "D108", "speed", "TD"),
        ("p10_distillation_frozen_teacher_tensordataset_through_worker", "D109", "speed", "1 w"),
        ("p11_multiprocessing_cpu_count_workers_heavy_decode", "D110", "speed", "cpu_count"),
        ("p12_meta_learning_episodes_of_four_through_worker", "D112", "speed", "batch 4"),
        ("p13_trainer_from_three_mixins_loader_property_workers_each_epoch", "D103", "speed", "ep"),
        ("p14_optimizer_from_spec_string_foreach_off", "D210", "speed", "foreach=0"),
        ("p15_coroutine_trainer_anomaly_around_body", "D211", "speed", "detect_anomaly"),
        ("p16_profiler_built_in_config_post_init_no_schedule", "D212", "speed", "no schedule"),
        ("p17_graph_net_message_layers_each_checkpointed", "D213", "speed", "checkpoint"),
        ("p18_multitask_weighted_losses_backward_per_weighted_term", "D214", "speed", "3 bw"),
        ("p19_swa_snapshot_deepcopy_state_dict_every_step", "D215", "speed", "state_dict copy"),
        ("p20_mixin_clear_grads_fills_zeros_model_zero_grad", "D220", "speed", "set_to_none=F"),
        ("p21_coroutine_step_zero_grad_before_loop_only", "D221", "error", "primed only"),
        ("p22_mixin_after_backward_grad_stats_then_zero", "D222", "error", "monitor clears"),
        ("p23_partial_validation_callback_with_autograd", "D301", "speed", "grad on"),
        ("p24_validation_coroutine_never_switches_to_eval", "D302", "error", "no eval()"),
        ("p25_fit_generator_consumer_validates_on_every_yield", "D304", "speed", "every yield"),
        ("p26_post_init_export_check_leaves_model_in_eval", "D305", "error", "eval() kept"),
        ("p27_tabular_per_column_bounds_assert_item_every_step", "D401", "info", "8 .item()"),
        ("p28_uncertainty_weights_from_loss_history_keeps_graphs", "D503", "speed", "graphs"),
        ("p29_context_ring_buffer_trim_assigned_to_local", "D504", "speed", "never trimmed"),
        ("p30_resumable_generator_saves_optimizer_after_each_yield", "D701", "speed", "per step"),
        ("p31_forward_hooks_print_activation_stats_every_call", "D702", "speed", "hook prints"),
        ("p32_labels_decoded_with_struct_in_training_loop", "D801", "speed", "struct loop"),
        ("q01_clean_generator_pipeline_send_metrics", "D107", "clean", "generators"),
        ("q02_clean_maml_torch_func_inner_loop", "D203", "clean", "torch.func MAML"),
        ("q03_clean_distillation_frozen_teacher_inference_mode", "D301", "clean", "teacher"),
        ("q04_clean_graph_net_scatter_index_add", "D203", "clean", "index_add_"),
        ("q05_clean_audio_unfold_frames_in_memory_clips", "D203", "clean", "unfold"),
        ("q06_clean_dataclass_post_init_mixins_trainer", "D305", "clean", "mixins"),
        ("q07_clean_tabular_column_embeddings_learned_task_weights", "D214", "clean", "one bw"),
        ("q08_clean_streaming_lm_deque_ring_buffer", "D504", "clean", "deque(maxlen)"),
    ]
]

# round 16: a fourteenth set (Lightning-free module look-alikes driven by tiny trainers, Keras-style
# compile()/fit(), trainers as context managers, state-machine loops, recursive curriculum,
# frozen-dataclass and Namespace configs, event buses (observer pattern), ExitStack callbacks,
# Protocol-typed steps, ChainDataset/ConcatDataset, a NumPy Sampler subclass, SimCLR, VAE with
# KL control, seq2seq, DDPM-like denoisers, point clouds, a recommender with sampled negatives)
PLANTED14 = [
    Planted(*row, folder=STYLES14)
    for row in [
        (
            "r01_frozen_dataclass_hparams_precision_string_lightning_look_alike",
            "D201",
            "speed",
            'precision "64"',
        ),
        (
            "r02_context_manager_trainer_namespace_from_dict_batch_of_two",
            "D202",
            "speed",
            "batch 2",
        ),
        ("r03_point_cloud_set_pooling_loop_over_points_in_forward", "D203", "speed", "per point"),
        (
            "r04_chain_dataset_of_sensor_streams_loaded_in_main_process",
            "D101",
            "speed",
            "0 workers",
        ),
        ("r05_point_cloud_collate_centres_each_cloud_point_by_point", "D111", "speed", "per point"),
        (
            "r06_recommender_negatives_rejection_sampled_in_getitem",
            "D105",
            "speed",
            "negatives/fetch",
        ),
        (
            "r07_protocol_typed_batch_source_rows_of_floats_to_tensor",
            "D106",
            "speed",
            "rows of floats",
        ),
        ("r08_state_machine_loop_fetch_state_new_iterator", "D107", "speed", "next(iter)"),
        (
            "r09_numpy_sampler_subclass_over_tensor_dataset_default_loader",
            "D108",
            "speed",
            "TD+sampler",
        ),
        (
            "r10_recursive_curriculum_stages_tensor_dataset_through_workers",
            "D109",
            "speed",
            "2 workers",
        ),
        (
            "r11_workers_from_sched_getaffinity_all_cores_heavy_augment",
            "D110",
            "speed",
            "all cores",
        ),
        ("r12_with_trainer_context_loader_built_each_epoch_workers", "D103", "speed", "per epoch"),
        ("r13_protocol_optimizer_factory_adamw_foreach_false", "D210", "speed", "foreach=False"),
        (
            "r14_event_bus_debug_subscriber_turns_on_anomaly_detection",
            "D211",
            "speed",
            "anomaly on",
        ),
        (
            "r15_exit_stack_of_callbacks_enters_profiler_without_schedule",
            "D212",
            "speed",
            "no schedule",
        ),
        ("r16_ddpm_unet_denoiser_blocks_checkpointed_small_images", "D213", "speed", "checkpoint"),
        (
            "r17_simclr_two_views_backward_per_direction_retain_graph",
            "D214",
            "speed",
            "2 backwards",
        ),
        (
            "r18_lightning_look_alike_optimizer_zero_grad_hook_fills_zeros",
            "D220",
            "speed",
            "set_to_none=F",
        ),
        (
            "r19_keras_style_compile_fit_zero_grad_referenced_not_called",
            "D221",
            "error",
            "zero_grad no ()",
        ),
        (
            "r20_step_recipe_list_zero_grad_between_backward_and_step",
            "D222",
            "error",
            "recipe order",
        ),
        (
            "r21_namespace_config_vae_kl_annealing_validation_with_autograd",
            "D301",
            "speed",
            "grad on",
        ),
        ("r22_denoiser_validation_no_grad_dropout_left_active", "D302", "error", "no eval()"),
        ("r23_event_bus_validation_subscribed_to_step_end", "D304", "speed", "every step"),
        ("r24_with_trainer_enter_sanity_check_leaves_eval_mode", "D305", "error", "eval() kept"),
        (
            "r25_point_cloud_segmentation_per_class_iou_floats_every_step",
            "D401",
            "info",
            "8 float()",
        ),
        ("r26_vae_kl_annealing_kl_terms_kept_for_adaptive_beta", "D503", "speed", "kl tensors"),
        ("r27_autoclip_percentile_over_every_gradient_norm_so_far", "D504", "speed", "all norms"),
        ("r28_state_machine_saves_resume_state_on_every_transition", "D701", "speed", "save/step"),
        (
            "r29_protocol_reporter_writes_batch_table_to_stderr_every_step",
            "D702",
            "speed",
            "print/step",
        ),
        (
            "r30_point_cloud_voxel_keys_hashed_in_python_in_training_loop",
            "D801",
            "speed",
            "voxel dict",
        ),
        (
            "r31_concat_dataset_of_domains_batches_of_four_through_workers",
            "D112",
            "speed",
            "batch 4",
        ),
        (
            "r32_event_bus_rollback_subscriber_deepcopies_model_every_step",
            "D215",
            "speed",
            "deepcopy/step",
        ),
        (
            "s01_clean_lightning_look_alike_trainer_inference_mode_validation",
            "D301",
            "clean",
            "inference_mode",
        ),
        ("s02_clean_keras_style_compile_fit_sliced_batches", "D221", "clean", "compile/fit"),
        ("s03_clean_with_trainer_state_machine_persistent_loader", "D103", "clean", "persistent"),
        ("s04_clean_vae_kl_annealing_floats_only", "D503", "clean", "floats"),
        (
            "s05_clean_seq2seq_teacher_forcing_ratio_whole_sequence",
            "D203",
            "clean",
            "whole sequence",
        ),
        ("s06_clean_ddpm_unet_time_embedding", "D213", "clean", "no checkpoint"),
        ("s07_clean_pointnet_vectorised_pooling_random_split", "D203", "clean", "amax"),
        (
            "s08_clean_recommender_in_batch_negatives_event_bus",
            "D105",
            "clean",
            "randint negatives",
        ),
    ]
]
