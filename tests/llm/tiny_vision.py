"""A tiny random-weight LLaVA (CLIP vision tower + Qwen2 text model) saved with its processor.

Built in-process from configs, nothing downloaded: the tokenizer is ``train.tiny``'s
byte-level BPE with an ``<image>`` token added, the image processor a 32x32 CLIP one
(the PIL backend: torchvision is not a dependency), so a folder that ``HFChatBackend``
loads as a vision model (it has ``preprocessor_config.json``).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["IMAGE_SIZE", "PATCH", "VISION_TEMPLATE", "build_tiny_vision_model"]

IMAGE_SIZE = 32
PATCH = 8

# ChatML with an <image> placeholder per image part (the processor expands it to patch tokens).
VISION_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}{{ '<image>' }}{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def build_tiny_vision_model(folder: str | Path, *, seed: int = 0) -> Path:
    """Save a tiny LLaVA and its processor to ``folder``; returns the folder."""
    import torch
    from transformers import (
        CLIPVisionConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        Qwen2Config,
    )
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    from train.tiny import build_tiny_tokenizer, corpus, store_texts

    folder = Path(folder)
    # Catalog lines as whole tokens keep the assistant's ~50k-character prompt short on CPU.
    tokenizer = build_tiny_tokenizer(corpus(store_texts()), vocab_size=2048, whole_lines=True)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<image>"]})
    image_processor = CLIPImageProcessorPil(
        size={"shortest_edge": IMAGE_SIZE}, crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}
    )
    # "default" drops CLIP's class token; one additional token counts it so that the
    # processor's <image> expansion matches the patch features (16 per image).
    processor = LlavaProcessor(
        image_processor=image_processor, tokenizer=tokenizer, patch_size=PATCH,
        vision_feature_select_strategy="default", num_additional_image_tokens=1, chat_template=VISION_TEMPLATE,
    )
    vision = CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                              image_size=IMAGE_SIZE, patch_size=PATCH, projection_dim=32)
    # A context that holds the full-catalog assistant prompt (about 8,300 of this tokenizer's
    # tokens): the backend refuses a prompt beyond the model's context.
    text = Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                       num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=16384,
                       eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
                       pad_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"))
    config = LlavaConfig(vision_config=vision, text_config=text,
                         image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
                         vision_feature_select_strategy="default", vision_feature_layer=-1)
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder
