"""A ViT train step in flax nnx, as the flax docs' ViT tutorial writes it."""
import jax
import jax.numpy as jnp
import optax
from flax import nnx


class EncoderBlock(nnx.Module):
    def __init__(self, hidden: int, heads: int, mlp: int, rngs: nnx.Rngs):
        self.norm1 = nnx.LayerNorm(hidden, rngs=rngs)
        self.attn = nnx.MultiHeadAttention(num_heads=heads, in_features=hidden, decode=False, rngs=rngs)
        self.norm2 = nnx.LayerNorm(hidden, rngs=rngs)
        self.mlp = nnx.Sequential(nnx.Linear(hidden, mlp, rngs=rngs), nnx.gelu, nnx.Dropout(0.1, rngs=rngs),
                                  nnx.Linear(mlp, hidden, rngs=rngs), nnx.Dropout(0.1, rngs=rngs))

    def __call__(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


class ViT(nnx.Module):
    def __init__(self, num_classes=10, in_channels=3, img_size=32, patch_size=8, num_layers=4,
                 num_heads=4, mlp_dim=128, hidden_size=64, rngs: nnx.Rngs = nnx.Rngs(0)):
        n_patches = (img_size // patch_size) ** 2
        self.patch_embeddings = nnx.Conv(in_channels, hidden_size, kernel_size=(patch_size, patch_size),
                                         strides=(patch_size, patch_size), padding="VALID", rngs=rngs)
        self.position_embeddings = nnx.Param(jax.random.normal(rngs.params(), (1, n_patches + 1, hidden_size)) * 0.02)
        self.dropout = nnx.Dropout(0.1, rngs=rngs)
        self.cls_token = nnx.Param(jnp.zeros((1, 1, hidden_size)))
        self.encoder = nnx.Sequential(*[EncoderBlock(hidden_size, num_heads, mlp_dim, rngs) for _ in range(num_layers)])
        self.final_norm = nnx.LayerNorm(hidden_size, rngs=rngs)
        self.classifier = nnx.Linear(hidden_size, num_classes, rngs=rngs)

    def __call__(self, x):
        patches = self.patch_embeddings(x)
        b, h, w, c = patches.shape
        patches = patches.reshape(b, h * w, c)
        cls_token = jnp.tile(self.cls_token[...], [b, 1, 1])
        x = jnp.concat([cls_token, patches], axis=1)
        x = self.dropout(x + self.position_embeddings[...])
        x = self.encoder(x)
        x = self.final_norm(x)
        return self.classifier(x[:, 0])


@nnx.jit
def train_step(model, optimizer, metrics, batch):
    def loss_fn(model):
        logits = model(batch["image"])
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, batch["label"]).mean()
        return loss, logits

    (loss, logits), grads = nnx.value_and_grad(loss_fn, has_aux=True)(model)
    metrics.update(loss=loss, logits=logits, labels=batch["label"])
    optimizer.update(model, grads)
    return loss


def make_inputs():
    model = ViT(rngs=nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adamw(1e-3), wrt=nnx.Param)
    metrics = nnx.MultiMetric(accuracy=nnx.metrics.Accuracy(), loss=nnx.metrics.Average("loss"))
    batch = {"image": jax.random.normal(jax.random.key(1), (8, 32, 32, 3)), "label": jnp.arange(8) % 10}
    return model, optimizer, metrics, batch


JAXSCOPE_INPUTS = {"train_step": make_inputs}
