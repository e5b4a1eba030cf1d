// Renders media/icon.svg to media/icon.png (128×128), the Marketplace icon. The PNG is committed, so
// packaging does not need the renderer; run this after changing the SVG: `node scripts/render-icon.js`.
const fs = require('node:fs');
const path = require('node:path');
const { Resvg } = require('@resvg/resvg-js');

const media = path.join(__dirname, '..', 'media');
const svg = fs.readFileSync(path.join(media, 'icon.svg'), 'utf8');
const png = new Resvg(svg, { fitTo: { mode: 'width', value: 128 }, background: 'rgba(0,0,0,0)' }).render().asPng();
fs.writeFileSync(path.join(media, 'icon.png'), png);
console.log(`media/icon.png: ${png.length} bytes`);
