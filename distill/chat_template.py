"""ChatML with TRL's generation markers, for every student model folder we write.

`{% generation %}…{% endgeneration %}` around assistant content (plus its `<|im_end|>`)
lets TRL mask everything but the assistant's tokens (`assistant_only_loss`,
`return_assistant_tokens_mask`). Content may be a string, None or a list of OpenAI content
parts ({"type": "text", "text": ...}). `default_system`: the system message a model's own
template adds when a conversation has none (SmolLM2's does; rendering must stay identical).
"""
from __future__ import annotations


def chatml_template(default_system: str | None = None) -> str:
    first = ("{%- if loop.first and messages[0]['role'] != 'system' -%}"
             "{{- '<|im_start|>system\\n" + default_system + "<|im_end|>\\n' -}}"
             "{%- endif -%}") if default_system else ""
    return (
        "{%- macro text(c) -%}"
        "{%- if c is none -%}{%- elif c is string -%}{{- c -}}"
        "{%- else -%}{%- for p in c -%}{%- if p['type'] == 'text' -%}{{- p['text'] -}}{%- endif -%}"
        "{%- endfor -%}{%- endif -%}"
        "{%- endmacro -%}"
        "{%- for message in messages -%}"
        + first +
        "{%- if message['role'] == 'assistant' -%}"
        "{{- '<|im_start|>assistant\\n' -}}"
        "{%- generation -%}{{- text(message['content']) + '<|im_end|>' -}}{%- endgeneration -%}"
        "{{- '\\n' -}}"
        "{%- else -%}"
        "{{- '<|im_start|>' + message['role'] + '\\n' + text(message['content']) + '<|im_end|>\\n' -}}"
        "{%- endif -%}"
        "{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
    )
