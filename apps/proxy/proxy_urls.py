"""The proxy's paths under /proxy/, as the SDKs build them from their base URL."""

from __future__ import annotations

from django.urls import path

from apps.proxy import views

urlpatterns = [
    path("openai/v1/chat/completions", views.ChatCompletionsApi.as_view(), name="proxy-openai-chat"),
    path("openai/v1/responses", views.ResponsesApi.as_view(), name="proxy-openai-responses"),
    path("openai/v1/models", views.ModelsApi.as_view(), name="proxy-openai-models"),
    path("anthropic/v1/messages", views.AnthropicMessagesApi.as_view(), name="proxy-anthropic-messages"),
]
