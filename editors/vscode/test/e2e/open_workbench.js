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
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
    const deadline = Date.now() + Number(seconds) * 1000;
    while (!fs.existsSync(report) && Date.now() < deadline) {
      await page.waitForTimeout(250);
    }
    await page.screenshot({ path: report.replace(/\.json$/, '.png') });
  } finally {
    await browser.close();
  }
  process.exit(fs.existsSync(report) ? 0 : 2);
})().catch((e) => { console.error(e); process.exit(3); });
