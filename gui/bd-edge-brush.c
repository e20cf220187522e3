/* SPDX-License-Identifier: Apache-2.0 */
/* The edge-aware brush: the guided filter (He et al.) solved again, locally, around a
 * stroke. Pixels the stroke did not touch and whose alpha is sure (≤ 0.1 or ≥ 0.9, the user's
 * marks included: keep = 1, remove = 0) are the constraints; in every window around the
 * stroke a linear model alpha = A . rgb + b is fitted to them by weighted least squares, so
 * that under the stroke a pixel coloured like the kept side nearby becomes kept and one
 * coloured like the removed side stays removed: the stroke snaps to the photo's own edges.
 *
 * As core/image/upsample-alpha.c does for the whole photo, the fit runs on a grid coarser
 * than the photo (about 8 cells to a window radius; each cell holds the exact sums of its
 * pixels, so nothing is lost but resolution of A and b, which vary slowly) and A, b are
 * interpolated back to full size: the cost is one pass over the pixels around the stroke.
 * Only windows that saw both sides count (a window of one side fits a constant that says
 * nothing of other colours); where none around did, the share of sure pixels around that
 * are kept is taken, and with no sure pixel around at all the plain brush's value. A stroke
 * far from any edge thus does what the photo around it says; Hardness says how far to
 * blend towards the plain brush: 100 % is the plain brush itself. The fit is linear in
 * colour, so a side made of two colours with the other's between them (dark trees and
 * bright sky around blonde hair) is told apart only where a window holds one of them.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "bd-document-private.h"
#include "bd-edge-brush.h"

#define CH          14      /* w, wI (3), wp, wIp (3), wII^T upper triangle (6) */
#define MODEL_CH    7       /* kA (3), kb, k: the models weighted by k; share kept, share sure */
#define GRID_RADIUS 8       /* the window's radius in grid cells */
#define EPS         4e-4f   /* the filter's regulariser, on colours in 0..1 */
#define SURE_LOW    25      /* alpha at or below this is a sure "removed" */
#define SURE_HIGH   230     /* and at or above this a sure "kept" */
#define K_FULL      0.0005f  /* k (share kept x share removed) around a pixel for full trust */

/* Mean over a (2r+1)^2 window, clipped at the borders, of @k interleaved channels, in place. */
static gboolean
box_mean (float *img,
          int    w,
          int    h,
          int    k,
          int    r)
{
  int n = MAX (w, h);
  g_autofree double *sum = g_try_new (double, (gsize) (n + 1) * k);
  g_autofree float *line = g_try_new (float, (gsize) n * k);

  if (sum == NULL || line == NULL)
    return FALSE;

  for (int pass = 0; pass < 2; pass++)
    {
      int len = pass == 0 ? w : h, lines = pass == 0 ? h : w;
      gsize step = pass == 0 ? (gsize) k : (gsize) w * k;

      for (int l = 0; l < lines; l++)
        {
          float *base = img + (pass == 0 ? (gsize) l * w * k : (gsize) l * k);

          for (int c = 0; c < k; c++)
            sum[c] = 0;
          for (int i = 0; i < len; i++)
            for (int c = 0; c < k; c++)
              sum[(gsize) (i + 1) * k + c] = sum[(gsize) i * k + c] + base[i * step + c];
          for (int i = 0; i < len; i++)
            {
              int lo = MAX (0, i - r), hi = MIN (len, i + r + 1);

              for (int c = 0; c < k; c++)
                line[(gsize) i * k + c] = (float) ((sum[(gsize) hi * k + c] - sum[(gsize) lo * k + c]) / (hi - lo));
            }
          for (int i = 0; i < len; i++)
            memcpy (base + i * step, line + (gsize) i * k, k * sizeof (float));
        }
    }
  return TRUE;
}

/* Solves (Sigma + eps I) a = cov for a symmetric 3x3 Sigma given by its upper triangle. */
static void
solve3 (const float s[6],
        const float cov[3],
        float       a[3])
{
  float m00 = s[0] + EPS, m01 = s[1], m02 = s[2], m11 = s[3] + EPS, m12 = s[4], m22 = s[5] + EPS;
  float c00 = m11 * m22 - m12 * m12, c01 = m02 * m12 - m01 * m22, c02 = m01 * m12 - m02 * m11;
  float c11 = m00 * m22 - m02 * m02, c12 = m01 * m02 - m00 * m12, c22 = m00 * m11 - m01 * m01;
  float det = m00 * c00 + m01 * c01 + m02 * c02;

  if (fabsf (det) < 1e-12f)
    {
      a[0] = a[1] = a[2] = 0;
      return;
    }
  a[0] = (c00 * cov[0] + c01 * cov[1] + c02 * cov[2]) / det;
  a[1] = (c01 * cov[0] + c11 * cov[1] + c12 * cov[2]) / det;
  a[2] = (c02 * cov[0] + c12 * cov[1] + c22 * cov[2]) / det;
}

/* The mask as the marks decide it now. */
static inline guint8
alpha_at (const BdEdgeBrush *b,
          gsize              i)
{
  return b->marks != NULL ? bd_mark_decide (b->marks[i], b->mask[i]) : b->mask[i];
}

static inline gboolean
is_under (const BdEdgeBrush *b,
          int                x,
          int                y)
{
  x -= b->area_x;
  y -= b->area_y;
  return x >= 0 && y >= 0 && x < b->area_width && y < b->area_height &&
         b->under[(gsize) y * b->area_width + x] != 0;
}

gboolean
bd_edge_brush_solve (const BdEdgeBrush *b,
                     guint8            *out)
{
  double rw = MAX (6.0, 1.5 * b->radius);          /* window radius, photo pixels */
  int s = MAX (1, (int) ceil (rw / GRID_RADIUS));  /* photo pixels a cell */
  int step = s >= 4 ? 2 : 1;                       /* every other pixel is plenty there */
  int margin = (int) ceil (rw) + s;
  int fx0 = MAX (0, b->area_x - margin), fy0 = MAX (0, b->area_y - margin);
  int fx1 = MIN (b->width, b->area_x + b->area_width + margin);
  int fy1 = MIN (b->height, b->area_y + b->area_height + margin);
  int gw = (fx1 - fx0 + s - 1) / s, gh = (fy1 - fy0 + s - 1) / s;
  float mark = b->keep ? 1.f : 0.f;
  g_autofree float *grid = NULL;
  g_autofree float *model = NULL;
  g_autofree guint32 *count = NULL;

  if (gw <= 0 || gh <= 0)
    return TRUE;

  grid = g_try_new0 (float, (gsize) gw * gh * CH);
  model = g_try_new (float, (gsize) gw * gh * MODEL_CH);
  count = g_try_new0 (guint32, (gsize) gw * gh);
  if (grid == NULL || model == NULL || count == NULL)
    return FALSE;

  /* The sums of each cell: sure pixels away from the stroke weigh 1, the rest nothing. */
  for (int y = fy0; y < fy1; y += step)
    {
      const guint8 *prow = b->photo + (gsize) y * b->stride;
      gsize arow = (gsize) y * b->width;
      float *grow = grid + (gsize) ((y - fy0) / s) * gw * CH;
      guint32 *crow = count + (gsize) ((y - fy0) / s) * gw;

      for (int x = fx0; x < fx1; x += step)
        {
          int cx = (x - fx0) / s;
          float *g = grow + (gsize) cx * CH;
          const guint8 *px = prow + (gsize) x * b->channels;
          guint8 a = alpha_at (b, arow + x);
          float r, gr, bl, p;

          crow[cx]++;
          if (a > SURE_LOW && a < SURE_HIGH)
            continue;
          if (is_under (b, x, y))
            continue;

          p = a >= SURE_HIGH ? 1.f : 0.f;
          r = px[0] / 255.f;
          gr = px[1] / 255.f;
          bl = px[2] / 255.f;
          g[0] += 1;
          g[1] += r;
          g[2] += gr;
          g[3] += bl;
          g[4] += p;
          g[5] += r * p;
          g[6] += gr * p;
          g[7] += bl * p;
          g[8] += r * r;
          g[9] += r * gr;
          g[10] += r * bl;
          g[11] += gr * gr;
          g[12] += gr * bl;
          g[13] += bl * bl;
        }
    }
  for (gsize i = 0; i < (gsize) gw * gh; i++)
    if (count[i] > 0)
      for (int c = 0; c < CH; c++)
        grid[i * CH + c] /= count[i];

  if (!box_mean (grid, gw, gh, CH, GRID_RADIUS))
    return FALSE;

  /* Each window's linear model, and how far to trust it. */
  for (gsize i = 0; i < (gsize) gw * gh; i++)
    {
      const float *g = grid + i * CH;
      float *m = model + i * MODEL_CH;
      float W = g[0], a[3];

      if (W < 1e-4f)
        {
          memset (m, 0, MODEL_CH * sizeof (float));
          continue;
        }

      {
        float mu[3] = { g[1] / W, g[2] / W, g[3] / W };
        float pm = g[4] / W;
        float cov[3] = { g[5] / W - mu[0] * pm, g[6] / W - mu[1] * pm, g[7] / W - mu[2] * pm };
        float sigma[6] = {
          g[8] / W - mu[0] * mu[0], g[9] / W - mu[0] * mu[1], g[10] / W - mu[0] * mu[2],
          g[11] / W - mu[1] * mu[1], g[12] / W - mu[1] * mu[2], g[13] / W - mu[2] * mu[2],
        };

        float k;

        solve3 (sigma, cov, a);
        /* A window that saw one side only fits a constant, which says nothing about the
         * colours under the stroke: only windows that saw both sides count, by how evenly. */
        k = g[4] * (W - g[4]);
        m[0] = k * a[0];
        m[1] = k * a[1];
        m[2] = k * a[2];
        m[3] = k * (pm - a[0] * mu[0] - a[1] * mu[1] - a[2] * mu[2]);
        m[4] = k;
        m[5] = g[4];
        m[6] = W;
      }
    }

  /* The filter's second mean: each pixel takes the models of the windows it lies in. */
  if (!box_mean (model, gw, gh, MODEL_CH, GRID_RADIUS))
    return FALSE;

  /* Under the stroke: the model at full size, interpolated between cell centres. */
  for (int y = 0; y < b->area_height; y++)
    {
      int py = b->area_y + y;
      float gy = CLAMP ((py - fy0 + 0.5f) / s - 0.5f, 0.f, (float) (gh - 1));
      int y0 = (int) gy, y1 = MIN (y0 + 1, gh - 1);
      float ty = gy - y0;
      const guint8 *prow = b->photo + (gsize) py * b->stride;
      gsize arow = (gsize) py * b->width;

      for (int x = 0; x < b->area_width; x++)
        {
          int px = b->area_x + x;
          float gx, tx, v, q, mix[MODEL_CH], a0, trust;
          int x0, x1;
          const guint8 *c;

          if (b->under[(gsize) y * b->area_width + x] == 0)
            continue;

          gx = CLAMP ((px - fx0 + 0.5f) / s - 0.5f, 0.f, (float) (gw - 1));
          x0 = (int) gx;
          x1 = MIN (x0 + 1, gw - 1);
          tx = gx - x0;
          for (int k = 0; k < MODEL_CH; k++)
            {
              float top = model[((gsize) y0 * gw + x0) * MODEL_CH + k] * (1 - tx) +
                          model[((gsize) y0 * gw + x1) * MODEL_CH + k] * tx;
              float bottom = model[((gsize) y1 * gw + x0) * MODEL_CH + k] * (1 - tx) +
                             model[((gsize) y1 * gw + x1) * MODEL_CH + k] * tx;

              mix[k] = top * (1 - ty) + bottom * ty;
            }

          /* Where no window around saw both sides, what the sure pixels around say (the
           * constant their windows fit); with none around, the plain brush's value. */
          c = prow + (gsize) px * b->channels;
          q = mark;
          if (mix[4] > 1e-7f)
            {
              q = (mix[0] * c[0] / 255.f + mix[1] * c[1] / 255.f + mix[2] * c[2] / 255.f + mix[3]) / mix[4];
              q = CLAMP (q, 0.f, 1.f);
            }
          trust = CLAMP (mix[4] / K_FULL, 0.f, 1.f);
          v = trust * q + (1 - trust) * (mix[6] > 1e-4f ? mix[5] / mix[6] : mark);
          v = (float) (b->hardness * mark + (1 - b->hardness) * v);
          a0 = alpha_at (b, arow + px) / 255.f;
          v = b->keep ? MAX (v, a0) : MIN (v, a0);
          out[(gsize) y * b->area_width + x] = (guint8) lrintf (v * 255.f);
        }
    }

  return TRUE;
}
