// Opens code-server's workbench in headless Chromium (VS Code starts the extension host only once a
// workbench connects) and waits for the probe's report file. Usage: node open_workbench.js URL REPORT SECONDS
const fs = require('fs');
const { chromium } = require(process.env.PLAYWRIGHT_CORE || 'playwright-core');

(async () => {
  const [url, report, seconds] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(url);
    await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
    const deadline = Date.now() + Number(seconds) * 1000;
    while (!fs.existsSync(report) && Date.now() < deadline) {
      await page.waitForTimeout(250);
    }
    await page.screenshot({ path: report.replace(/\.json$/, '.png') });
    if (fs.existsSync(report)) {
      const ui = { hover: null, notifications: [] };
      // the notification center the probe opened: every message shown in the session
      try {
        await page.locator('.notifications-center').first().waitFor({ state: 'visible', timeout: 10000 });
        ui.notifications = await page.locator('.notifications-center .monaco-list-row').allInnerTexts();
        await page.keyboard.press('Escape');
      } catch (e) {
        ui.notificationsError = String(e.message || e);
      }
      const mode = JSON.parse(fs.readFileSync(report, 'utf8')).mode;
      // one check through the UI (unless the probe ran another scenario): the hover widget over `make_shape('x')` in the editor the probe opened
      if (!mode) try {
        const line = page.locator('.monaco-editor .view-line', { hasText: "make_shape('x')" }).first();
        await line.waitFor({ timeout: 20000 });
        const box = await line.boundingBox();
        const widget = page.locator('.monaco-hover', { hasText: 'Make a widget from a name.' });
        for (let i = 0; i < 6 && ui.hover === null; i++) {
          await page.mouse.move(5, 5);
          await page.mouse.move(box.x + 12 + i, box.y + box.height / 2);
          try {
            await widget.first().waitFor({ state: 'visible', timeout: 5000 });
            ui.hover = await widget.first().innerText();
          } catch (e) {
            ui.error = String(e.message || e);
          }
        }
        await page.screenshot({ path: report.replace(/\.json$/, '-hover.png') });
        ui.status = await page.locator('.statusbar-item', { hasText: 'RepoDoc' }).first().innerText({ timeout: 5000 });
      } catch (e) {
        ui.error = String(e.message || e);
      }
      fs.writeFileSync(report.replace(/\.json$/, '-ui.json'), JSON.stringify(ui, null, 1));
    }
  } finally {
    await browser.close();
  }
  process.exit(fs.existsSync(report) ? 0 : 2);
})().catch((e) => { console.error(e); process.exit(3); });
